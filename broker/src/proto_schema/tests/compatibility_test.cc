#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "proto_schema/proto_schema.h"
#include "proto_schema/tests/confluent_diff_vectors.h"

namespace ferry::proto_schema {
namespace {

schema::schema_ptr must_parse(const std::string& text, const std::vector<schema::named_schema>& references = {}) {
  auto parsed = parse(text, references, {});
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message) << "\n" << text;
  return parsed ? parsed.value() : nullptr;
}

// "TYPE #/path" for each message, sorted, to compare with Confluent's lists.
std::vector<std::string> differences(const schema::parsed_schema& update, const schema::parsed_schema& original) {
  std::vector<std::string> out;
  for (const auto& message : update.backward_incompatibilities(original)) {
    const auto type_start = message.find('"') + 1;
    const auto type = message.substr(type_start, message.find('"', type_start) - type_start);
    const auto path_start = message.find('\'') + 1;
    out.push_back(type + " " + message.substr(path_start, message.find('\'', path_start) - path_start));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Old and new schema (proto3 bodies unless they say otherwise), and the incompatible differences expected.
std::vector<std::string> diff(const std::string& original, const std::string& update) {
  const auto before = must_parse(original);
  const auto after = must_parse(update);
  if (!before || !after) return {"unparsed"};
  return differences(*after, *before);
}

std::string proto3(const std::string& body) { return "syntax = \"proto3\";\n" + body; }
std::string proto2(const std::string& body) { return "syntax = \"proto2\";\n" + body; }

using list = std::vector<std::string>;

class proto_schema_confluent_vectors : public ::testing::TestWithParam<testing::diff_vector> {};

TEST_P(proto_schema_confluent_vectors, finds_the_incompatible_differences_confluent_finds) {
  const auto& vector = GetParam();
  const auto original = must_parse(vector.original, vector.original_references);
  const auto update = must_parse(vector.update, vector.update_references);
  ASSERT_TRUE(original && update);
  list expected(vector.incompatible.begin(), vector.incompatible.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(differences(*update, *original), expected) << vector.description;
}

INSTANTIATE_TEST_SUITE_P(diff_schema_examples, proto_schema_confluent_vectors,
                         ::testing::ValuesIn(testing::confluent_diff_vectors()),
                         [](const auto& info) { return "vector_" + std::to_string(info.index); });

TEST(proto_schema_compatibility, message_is_confluents_with_new_and_old_filled_in) {
  const auto before = must_parse(proto3("message Order { int32 id = 1; }"));
  const auto after = must_parse(proto3("message Order { string id = 1; }"));
  ASSERT_TRUE(before && after);
  EXPECT_EQ(after->backward_incompatibilities(*before),
            list{"{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a SCALAR field at path "
                 "'#/Order/1' in the new schema does not match its kind in the old schema\"}"});
}

TEST(proto_schema_compatibility, a_schema_is_compatible_with_itself) {
  const auto text = proto3(R"(package shop;
import "google/protobuf/timestamp.proto";
message Order {
  string id = 1;
  map<string, Line> lines = 2;
  oneof payment { string card = 3; int64 voucher = 4; }
  google.protobuf.Timestamp at = 5;
  optional Order parent = 6;
  message Line { int32 quantity = 1; repeated Order orders = 2; }
}
enum Status { UNKNOWN = 0; DONE = 1; })");
  const auto schema = must_parse(text);
  ASSERT_TRUE(schema);
  EXPECT_TRUE(schema->backward_incompatibilities(*schema).empty());
}

TEST(proto_schema_compatibility, numeric_changes_within_a_group_are_compatible) {
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { int64 a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { uint32 a = 1; }"), proto3("message M { bool a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { sint32 a = 1; }"), proto3("message M { sint64 a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { fixed32 a = 1; }"), proto3("message M { sfixed32 a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { fixed64 a = 1; }"), proto3("message M { sfixed64 a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { string a = 1; }"), proto3("message M { bytes a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { E a = 1; } enum E { Z = 0; }")), list{});
}

TEST(proto_schema_compatibility, changes_across_scalar_groups_are_not) {
  const list changed{"FIELD_SCALAR_KIND_CHANGED #/M/1"};
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { sint32 a = 1; }")), changed);
  EXPECT_EQ(diff(proto3("message M { float a = 1; }"), proto3("message M { double a = 1; }")), changed);
  EXPECT_EQ(diff(proto3("message M { fixed32 a = 1; }"), proto3("message M { fixed64 a = 1; }")), changed);
  EXPECT_EQ(diff(proto3("message M { int64 a = 1; }"), proto3("message M { fixed64 a = 1; }")), changed);
  EXPECT_EQ(diff(proto3("message M { string a = 1; }"), proto3("message M { int32 a = 1; }")), changed);
  EXPECT_EQ(diff(proto3("message M { E a = 1; } enum E { Z = 0; }"), proto3("message M { sint32 a = 1; }")), changed);
}

TEST(proto_schema_compatibility, field_kinds_must_stay) {
  const list changed{"FIELD_KIND_CHANGED #/M/1"};
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { N a = 1; } message N {}")), changed);
  EXPECT_EQ(diff(proto3("message M { map<string, int32> a = 1; }"),
                 proto3("message M { repeated N a = 1; } message N { string key = 1; int32 value = 2; }")),
            changed);
  EXPECT_EQ(diff(proto3("message M { map<string, int32> a = 1; }"), proto3("message M { repeated int32 a = 1; }")),
            changed);
}

TEST(proto_schema_compatibility, map_keys_and_values_are_diffed_at_the_field) {
  EXPECT_EQ(diff(proto3("message M { map<string, int32> a = 1; }"), proto3("message M { map<string, int64> a = 1; }")),
            list{});
  EXPECT_EQ(diff(proto3("message M { map<string, int32> a = 1; }"), proto3("message M { map<int32, int32> a = 1; }")),
            list{"FIELD_SCALAR_KIND_CHANGED #/M/1"});
  EXPECT_EQ(diff(proto3("message M { map<string, N> a = 1; } message N {}"),
                 proto3("message M { map<string, O> a = 1; } message N {} message O {}")),
            list{"FIELD_NAMED_TYPE_CHANGED #/M/1"});
}

TEST(proto_schema_compatibility, labels_of_numbers_matter_and_of_strings_do_not) {
  EXPECT_EQ(diff(proto2("message M { optional int32 a = 1; }"), proto2("message M { repeated int32 a = 1; }")),
            list{"FIELD_NUMERIC_LABEL_CHANGED #/M/1"});
  EXPECT_EQ(diff(proto3("message M { optional int32 a = 1; }"), proto3("message M { repeated int32 a = 1; }")),
            list{"FIELD_NUMERIC_LABEL_CHANGED #/M/1"});
  EXPECT_EQ(diff(proto2("message M { optional string a = 1; }"), proto2("message M { repeated string a = 1; }")),
            list{});
  // A proto3 singular field has no label in Confluent's model, so nothing compares.
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { repeated int32 a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { optional int32 a = 1; }")), list{});
}

TEST(proto_schema_compatibility, required_fields_may_not_come_or_go) {
  EXPECT_EQ(diff(proto2("message M { optional int32 a = 1; }"),
                 proto2("message M { optional int32 a = 1; required int32 b = 2; }")),
            list{"REQUIRED_FIELD_ADDED #/M/2"});
  EXPECT_EQ(diff(proto2("message M { required int32 a = 1; optional int32 b = 2; }"),
                 proto2("message M { optional int32 b = 2; }")),
            list{"REQUIRED_FIELD_REMOVED #/M/1"});
  EXPECT_EQ(diff(proto2("message M { optional int32 a = 1; }"), proto2("message M { }")), list{});
}

TEST(proto_schema_compatibility, messages_may_be_added_moved_but_not_removed) {
  EXPECT_EQ(diff(proto3("message A {} message B {}"), proto3("message B {} message A {} message C {}")), list{});
  EXPECT_EQ(diff(proto3("message A {} message B {}"), proto3("message A {}")), list{"MESSAGE_REMOVED #/B"});
  EXPECT_EQ(diff(proto3("message A { message In {} }"), proto3("message A {}")), list{"MESSAGE_REMOVED #/A/In"});
  EXPECT_EQ(diff(proto3("message A { map<string, string> m = 1; }"), proto3("message A {}")), list{});
}

TEST(proto_schema_compatibility, enums_and_field_names_may_change) {
  EXPECT_EQ(diff(proto3("enum E { A = 0; B = 1; } message M { E e = 1; }"),
                 proto3("enum E { Z = 0; C = 2; } message M { E renamed = 1; string added = 2; }")),
            list{});
  EXPECT_EQ(diff(proto3("enum E { A = 0; }"), proto3("")), list{});
}

TEST(proto_schema_compatibility, package_changes_are_reported_at_the_root) {
  EXPECT_EQ(diff(proto3("package a;"), proto3("package b;")), list{"PACKAGE_CHANGED #/"});
  EXPECT_EQ(diff(proto3(""), proto3("package b;")), list{"PACKAGE_CHANGED #/"});
}

TEST(proto_schema_compatibility, oneofs_follow_confluents_rules) {
  EXPECT_EQ(diff(proto3("message M { oneof o { int32 a = 1; int32 b = 2; } }"),
                 proto3("message M { oneof o { int32 a = 1; } }")),
            list{"ONEOF_FIELD_REMOVED #/M/o/2"});
  EXPECT_EQ(diff(proto3("message M { oneof o { int32 a = 1; int32 b = 2; } }"), proto3("message M { }")), list{});
  EXPECT_EQ(diff(proto3("message M { oneof o { int32 a = 1; } int32 b = 2; }"),
                 proto3("message M { oneof o { int32 a = 1; int32 b = 2; } }")),
            list{"FIELD_MOVED_TO_EXISTING_ONEOF #/M/o"});
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; int32 b = 2; }"),
                 proto3("message M { oneof o { int32 a = 1; int32 b = 2; } }")),
            list{"MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/o"});
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { oneof o { int32 a = 1; int32 b = 2; } }")),
            list{});
  EXPECT_EQ(diff(proto3("message M { oneof o { int32 a = 1; } }"), proto3("message M { int32 a = 1; }")), list{});
  EXPECT_EQ(diff(proto3("message M { oneof o { int32 a = 1; } }"), proto3("message M { oneof o { string a = 1; } }")),
            list{"FIELD_SCALAR_KIND_CHANGED #/M/o/1"});
}

TEST(proto_schema_compatibility, proto3_optional_is_not_a_oneof) {
  EXPECT_EQ(diff(proto3("message M { optional int32 a = 1; optional int32 b = 2; }"), proto3("message M { }")), list{});
  EXPECT_EQ(diff(proto3("message M { int32 a = 1; }"), proto3("message M { optional int32 a = 1; }")), list{});
}

TEST(proto_schema_compatibility, referenced_types_are_diffed_into_their_fields) {
  const std::vector<schema::named_schema> v1{
      {"customer.proto", proto3("package crm; message Customer { int32 id = 1; }")}};
  const std::vector<schema::named_schema> v2{
      {"customer.proto", proto3("package crm; message Customer { string id = 1; }")}};
  const auto text = proto3("import \"customer.proto\"; message Order { crm.Customer customer = 1; }");
  const auto before = must_parse(text, v1);
  const auto after = must_parse(text, v2);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(differences(*after, *before),
            (list{"FIELD_NAMED_TYPE_CHANGED #/Order/1", "FIELD_SCALAR_KIND_CHANGED #/Customer/1"}));
  EXPECT_EQ(differences(*after, *after), list{});
}

TEST(proto_schema_compatibility, built_in_types_compare_by_name) {
  EXPECT_EQ(diff(proto3("import \"google/type/date.proto\"; message M { google.type.Date d = 1; }"),
                 proto3("import \"google/type/timeofday.proto\"; message M { google.type.TimeOfDay d = 1; }")),
            list{"FIELD_NAMED_TYPE_CHANGED #/M/1"});
  EXPECT_EQ(diff(proto3("import \"google/protobuf/timestamp.proto\"; message M { google.protobuf.Timestamp t = 1; }"),
                 proto3("import \"google/protobuf/timestamp.proto\"; message M { .google.protobuf.Timestamp t = 1; }")),
            list{});
}

TEST(proto_schema_compatibility, recursive_referenced_types_end) {
  const std::vector<schema::named_schema> v1{
      {"tree.proto", proto3("message Node { repeated Node children = 1; int32 value = 2; }")}};
  const std::vector<schema::named_schema> v2{
      {"tree.proto", proto3("message Node { repeated Node children = 1; string value = 2; }")}};
  const auto text = proto3("import \"tree.proto\"; message Tree { Node root = 1; }");
  const auto before = must_parse(text, v1);
  const auto after = must_parse(text, v2);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(differences(*after, *before),
            (list{"FIELD_NAMED_TYPE_CHANGED #/Tree/1", "FIELD_SCALAR_KIND_CHANGED #/Node/2"}));
}

// Each referenced pair of types is diffed once: a chain where every type uses the next three times would otherwise
// take 3^14 diffs.
TEST(proto_schema_compatibility, shared_referenced_types_are_diffed_once) {
  auto chain = [](const std::string& last_type) {
    std::string text = "syntax = \"proto3\"; package c;";
    for (int i = 0; i < 14; ++i) {
      const auto next = "T" + std::to_string(i + 1);
      text += " message T" + std::to_string(i) + " { " + next + " a = 1; " + next + " b = 2; " + next + " c = 3; }";
    }
    return text + " message T14 { " + last_type + " v = 1; }";
  };
  const auto text = proto3("import \"chain.proto\"; message Root { c.T0 t = 1; }");
  const auto before = must_parse(text, {{"chain.proto", chain("int32")}});
  const auto after = must_parse(text, {{"chain.proto", chain("string")}});
  ASSERT_TRUE(before && after);
  const auto found = differences(*after, *before);
  EXPECT_NE(std::find(found.begin(), found.end(), "FIELD_SCALAR_KIND_CHANGED #/T14/1"), found.end());
  EXPECT_NE(std::find(found.begin(), found.end(), "FIELD_NAMED_TYPE_CHANGED #/Root/1"), found.end());
}

TEST(proto_schema_compatibility, forward_is_the_check_the_other_way) {
  const auto before = must_parse(proto2("message M { optional int32 a = 1; }"));
  const auto after = must_parse(proto2("message M { optional int32 a = 1; required int32 b = 2; }"));
  ASSERT_TRUE(before && after);
  EXPECT_EQ(differences(*after, *before), list{"REQUIRED_FIELD_ADDED #/M/2"});
  EXPECT_EQ(differences(*before, *after), list{"REQUIRED_FIELD_REMOVED #/M/2"});
}

class other_format final : public schema::parsed_schema {
 public:
  [[nodiscard]] schema::schema_type type() const override { return schema::schema_type::avro; }
  [[nodiscard]] std::string canonical() const override { return "\"int\""; }
  [[nodiscard]] std::string normalized() const override { return "\"int\""; }
  [[nodiscard]] std::vector<std::string> backward_incompatibilities(const schema::parsed_schema&) const override {
    return {};
  }
};

TEST(proto_schema_compatibility, another_format_is_incompatible) {
  const auto schema = must_parse(proto3("message M {}"));
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->backward_incompatibilities(other_format{}), list{"Incompatible because of different schema type"});
}

}  // namespace
}  // namespace ferry::proto_schema
