#include "registry/schema_records.h"

#include <gtest/gtest.h>

#include "registry/schema_store.h"

namespace ferry::registry {
namespace {

// Keys are compared byte for byte by compaction: Confluent's exact field order.
TEST(SchemaRecords, KeysAreWrittenInConfluentsFieldOrder) {
  EXPECT_EQ(encode_key(schema_key{"orders-value", 3}),
            R"({"keytype":"SCHEMA","subject":"orders-value","version":3,"magic":1})");
  EXPECT_EQ(encode_key(config_key{std::nullopt}), R"({"keytype":"CONFIG","subject":null,"magic":0})");
  EXPECT_EQ(encode_key(mode_key{"s"}), R"({"keytype":"MODE","subject":"s","magic":0})");
  EXPECT_EQ(encode_key(delete_subject_key{"s"}), R"({"keytype":"DELETE_SUBJECT","subject":"s","magic":0})");
  EXPECT_EQ(encode_key(noop_key{}), R"({"keytype":"NOOP","magic":0})");
}

TEST(SchemaRecords, SchemaValuesOmitTheTypeForAvroAndRoundTrip) {
  schema_value avro{"s", 1, 7, schema::schema_type::avro, {}, R"("string")", false};
  EXPECT_EQ(encode_schema_value(avro), R"({"subject":"s","version":1,"id":7,"schema":"\"string\"","deleted":false})");
  schema_value json{"t", 2, 8, schema::schema_type::json, {{"a.json", "a", 1}}, "{}", true};
  const auto decoded = decode_schema_value(encode_schema_value(json));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->type, schema::schema_type::json);
  EXPECT_EQ(decoded->references, json.references);
  EXPECT_TRUE(decoded->deleted);
  EXPECT_EQ(decoded->id, 8);
}

// Karapace writes key fields in another order and newer Confluent servers add fields: both still load.
TEST(SchemaRecords, KeysInAnyOrderAndUnknownFieldsAreRead) {
  const auto key = decode_key(R"({"magic":1,"subject":"s","version":2,"keytype":"SCHEMA"})");
  ASSERT_TRUE(key);
  ASSERT_TRUE(std::holds_alternative<schema_key>(*key));
  EXPECT_EQ(std::get<schema_key>(*key).version, 2);
  EXPECT_TRUE(decode_schema_value(R"({"subject":"s","version":2,"id":3,"schema":"x","md5":"abc","ruleSet":{}})"));
  EXPECT_FALSE(decode_key(R"({"keytype":"CONTEXT","tenant":"x","magic":0})"));
  EXPECT_FALSE(decode_key("not json"));
}

TEST(SchemaStore, AppliesVersionsSoftDeletesTombstonesAndSettings) {
  schema_store store;
  const auto put = [&](const std::string& subject, int version, int id, bool deleted = false) {
    store.apply(encode_key(schema_key{subject, version}),
                encode_schema_value(
                    {subject, version, id, schema::schema_type::avro, {}, "\"int\"" + std::to_string(id), deleted}));
  };
  put("a", 1, 1);
  put("a", 2, 2);
  put("b", 1, 2);
  store.apply(encode_key(noop_key{}), std::optional<std::string_view>("{}"));
  EXPECT_EQ(store.max_id(), 2);
  EXPECT_EQ(store.usages(2).size(), 2U);
  EXPECT_EQ(store.find_subject("a")->latest(false)->version, 2);

  store.apply(encode_key(delete_subject_key{"a"}), encode_watermark_value({"a", 1}));
  EXPECT_TRUE(store.find_subject("a")->versions.at(1).deleted);
  EXPECT_FALSE(store.find_subject("a")->versions.at(2).deleted);

  store.apply(encode_key(schema_key{"a", 1}), std::nullopt);
  EXPECT_FALSE(store.find_subject("a")->versions.contains(1));
  EXPECT_EQ(store.find_schema(1), nullptr) << "no version uses id 1 any more";
  EXPECT_EQ(store.max_id(), 2) << "ids are never handed out twice";

  store.apply(encode_key(config_key{"b"}), encode_config_value("FULL"));
  EXPECT_EQ(store.compatibility("b"), "FULL");
  store.apply(encode_key(config_key{"b"}), std::nullopt);
  EXPECT_FALSE(store.compatibility("b"));
  store.apply(encode_key(mode_key{std::nullopt}), encode_mode_value("READONLY"));
  EXPECT_EQ(store.mode(std::nullopt), "READONLY");
}

TEST(SchemaStore, SkipsRecordsItCannotRead) {
  schema_store store;
  store.apply("garbage", std::optional<std::string_view>("garbage"));
  store.apply(encode_key(schema_key{"s", 1}), std::optional<std::string_view>(R"({"subject":"other","version":1})"));
  store.apply(encode_key(schema_key{"s", 1}),
              std::optional<std::string_view>(R"({"subject":"s","version":1,"id":-4,"schema":"x"})"));
  EXPECT_TRUE(store.subjects().empty());
}

}  // namespace
}  // namespace ferry::registry
