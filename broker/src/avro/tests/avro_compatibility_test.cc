// Vectors from the Avro specification's "Schema Resolution" and Karapace's test_avro_compatibility.py (ported
// from Confluent's AvroCompatibilityTest), as facts; messages follow Java SchemaCompatibility's.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "avro/avro_schema.h"

namespace ferry::avro {
namespace {

schema::schema_ptr must_parse(const std::string& text) {
  auto parsed = parse(text, {}, {});
  EXPECT_TRUE(parsed) << text << ": " << (parsed ? "" : parsed.error().message);
  return parsed ? parsed.value() : parse("\"null\"", {}, {}).value();
}

std::vector<std::string> problems(const std::string& reader, const std::string& writer) {
  return must_parse(reader)->backward_incompatibilities(*must_parse(writer));
}

bool compatible(const std::string& reader, const std::string& writer) { return problems(reader, writer).empty(); }

std::string record(const std::string& fields, const std::string& extra = "") {
  return R"({"type":"record","name":"myrecord")" + extra + R"(,"fields":[)" + fields + "]}";
}

TEST(AvroCompatibility, Promotions) {
  const std::vector<std::pair<std::string, std::string>> allowed = {
      {"long", "int"},    {"float", "int"},    {"double", "int"},   {"float", "long"},
      {"double", "long"}, {"double", "float"}, {"bytes", "string"}, {"string", "bytes"}};
  for (const auto& [reader, writer] : allowed) {
    EXPECT_TRUE(compatible("\"" + reader + "\"", "\"" + writer + "\"")) << reader << " <- " << writer;
    EXPECT_EQ(problems("\"" + writer + "\"", "\"" + reader + "\"").size(),
              reader == "bytes" || reader == "string" ? 0U : 1U)
        << writer << " <- " << reader;
  }
  EXPECT_EQ(problems("\"int\"", "\"string\""),
            std::vector<std::string>{"TYPE_MISMATCH at /: reader type: INT not compatible with writer type: STRING"});
  EXPECT_FALSE(compatible("\"boolean\"", "\"int\""));
  EXPECT_FALSE(compatible("\"null\"", "\"int\""));
}

TEST(AvroCompatibility, RecordFields) {
  const auto f1 = record(R"({"name":"f1","type":"string"})");
  const auto f1_f2_default = record(R"({"name":"f1","type":"string"},{"name":"f2","type":"string","default":"foo"})");
  const auto f1_f2 = record(R"({"name":"f1","type":"string"},{"name":"f2","type":"string"})");
  EXPECT_TRUE(compatible(f1_f2_default, f1));
  EXPECT_TRUE(compatible(f1, f1_f2_default));
  EXPECT_TRUE(compatible(f1, f1_f2));
  EXPECT_EQ(problems(f1_f2, f1), std::vector<std::string>{"READER_FIELD_MISSING_DEFAULT_VALUE at /fields/1: reader "
                                                          "field 'f2' has no default value"});
  EXPECT_EQ(problems(record(R"({"name":"f1","type":"int"})"), f1),
            std::vector<std::string>{
                "TYPE_MISMATCH at /fields/0/type: reader type: INT not compatible with writer type: STRING"});
  // Field aliases of the reader find renamed writer fields.
  EXPECT_TRUE(compatible(record(R"({"name":"g","type":"string","aliases":["f1"]})"), f1));
  EXPECT_FALSE(compatible(record(R"({"name":"g","type":"string"})"), f1));
  // A reader field matching two writer fields makes Java throw; Confluent reports it.
  const auto both = problems(record(R"({"name":"a","type":"int","aliases":["b"]})"),
                             record(R"({"name":"a","type":"int"},{"name":"b","type":"int"})"));
  ASSERT_EQ(both.size(), 1U);
  EXPECT_EQ(both.front().rfind("Unexpected exception", 0), 0U);
}

TEST(AvroCompatibility, Names) {
  const auto a = R"({"type":"record","name":"a.R","fields":[]})";
  EXPECT_TRUE(compatible(R"({"type":"record","name":"b.R","fields":[]})", a));  // unqualified names compare
  EXPECT_EQ(problems(R"({"type":"record","name":"S","fields":[]})", a),
            std::vector<std::string>{"NAME_MISMATCH at /name: expected: a.R"});
  EXPECT_TRUE(compatible(R"({"type":"record","name":"S","aliases":["a.R"],"fields":[]})", a));
  EXPECT_TRUE(compatible(R"({"type":"record","name":"a.S","aliases":["R"],"fields":[]})", a));
  EXPECT_FALSE(compatible(R"({"type":"record","name":"S","aliases":["R"],"fields":[]})", a));
}

TEST(AvroCompatibility, Enums) {
  const auto ab = R"({"type":"enum","name":"E","symbols":["A","B"]})";
  const auto abc = R"({"type":"enum","name":"E","symbols":["A","B","C"]})";
  EXPECT_TRUE(compatible(abc, ab));
  EXPECT_EQ(problems(ab, abc), std::vector<std::string>{"MISSING_ENUM_SYMBOLS at /symbols: [C]"});
  EXPECT_TRUE(compatible(R"({"type":"enum","name":"E","symbols":["A","B"],"default":"A"})", abc));
  EXPECT_EQ(problems(R"({"type":"enum","name":"F","symbols":["A","B","C"]})", ab),
            std::vector<std::string>{"NAME_MISMATCH at /name: expected: E"});
}

TEST(AvroCompatibility, Fixed) {
  EXPECT_TRUE(compatible(R"({"type":"fixed","name":"F","size":4})", R"({"type":"fixed","name":"F","size":4})"));
  EXPECT_EQ(problems(R"({"type":"fixed","name":"F","size":8})", R"({"type":"fixed","name":"F","size":4})"),
            std::vector<std::string>{"FIXED_SIZE_MISMATCH at /size: expected: 4, found: 8"});
  EXPECT_FALSE(compatible(R"({"type":"fixed","name":"G","size":4})", R"({"type":"fixed","name":"F","size":4})"));
  // Logical types play no part in Java's check.
  EXPECT_TRUE(compatible(R"({"type":"bytes","logicalType":"decimal","precision":4,"scale":2})",
                         R"({"type":"bytes","logicalType":"decimal","precision":6,"scale":1})"));
}

TEST(AvroCompatibility, ArraysAndMaps) {
  EXPECT_TRUE(compatible(R"({"type":"array","items":"long"})", R"({"type":"array","items":"int"})"));
  EXPECT_EQ(
      problems(R"({"type":"array","items":"int"})", R"({"type":"array","items":"long"})"),
      std::vector<std::string>{"TYPE_MISMATCH at /items: reader type: INT not compatible with writer type: LONG"});
  EXPECT_EQ(
      problems(R"({"type":"map","values":"int"})", R"({"type":"map","values":"string"})"),
      std::vector<std::string>{"TYPE_MISMATCH at /values: reader type: INT not compatible with writer type: STRING"});
  EXPECT_FALSE(compatible(R"({"type":"map","values":"int"})", R"({"type":"array","items":"int"})"));
}

TEST(AvroCompatibility, Unions) {
  EXPECT_TRUE(compatible(R"(["null","int"])", R"("int")"));
  EXPECT_TRUE(compatible(R"(["null","long"])", R"("int")"));
  EXPECT_EQ(problems(R"(["null","string"])", R"("int")"),
            std::vector<std::string>{"MISSING_UNION_BRANCH at /: reader union lacking writer type: INT"});
  EXPECT_TRUE(compatible(R"("long")", R"(["int","long"])"));
  EXPECT_EQ(problems(R"("int")", R"(["int","string"])"),
            std::vector<std::string>{"TYPE_MISMATCH at /1: reader type: INT not compatible with writer type: STRING"});
  EXPECT_TRUE(compatible(R"(["null","int","string"])", R"(["int","null"])"));
  EXPECT_EQ(problems(R"(["null","int"])", R"(["int","null","string"])"),
            std::vector<std::string>{"MISSING_UNION_BRANCH at /2: reader union lacking writer type: STRING"});
  EXPECT_TRUE(compatible(R"([])", R"([])"));
  EXPECT_FALSE(compatible(R"([])", R"("int")"));
  const auto nullable = record(R"({"name":"f1","type":["null","string"],"default":null})");
  EXPECT_TRUE(compatible(nullable, record(R"({"name":"f1","type":"string"})")));
  EXPECT_FALSE(compatible(record(R"({"name":"f1","type":"string"})"), nullable));
  EXPECT_TRUE(compatible(nullable, record("")));
}

TEST(AvroCompatibility, MissingFieldWithEnumDefaultStillMismatches) {
  // Java compares the field's enum with the writer record, which reports a type mismatch.
  EXPECT_EQ(
      problems(record(R"({"name":"e","type":{"type":"enum","name":"E","symbols":["A"],"default":"A"}})"), record("")),
      std::vector<std::string>{
          "TYPE_MISMATCH at /fields/0/type: reader type: ENUM not compatible with writer type: RECORD"});
}

TEST(AvroCompatibility, RecursiveTypesTerminate) {
  const auto list = R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},
      {"name":"next","type":["null","L"],"default":null}]})";
  const auto list_long = R"({"type":"record","name":"L","fields":[{"name":"v","type":"long"},
      {"name":"next","type":["null","L"],"default":null}]})";
  EXPECT_TRUE(compatible(list, list));
  EXPECT_TRUE(compatible(list_long, list));
  EXPECT_FALSE(compatible(list, list_long));
}

TEST(AvroCompatibility, SelfCompatibleAndChangesDetected) {
  const auto v1 = record(R"({"name":"id","type":"long"},{"name":"tags","type":{"type":"map","values":"string"}},
      {"name":"kind","type":{"type":"enum","name":"K","symbols":["X","Y"]}}, {"name":"raw","type":
      {"type":"fixed","name":"Raw","size":16}}, {"name":"opt","type":["null",{"type":"record","name":"Sub",
      "fields":[{"name":"a","type":"int"}]}],"default":null})");
  EXPECT_TRUE(compatible(v1, v1));
  const auto v2 = record(R"({"name":"id","type":"long"},{"name":"tags","type":{"type":"map","values":"string"}},
      {"name":"kind","type":{"type":"enum","name":"K","symbols":["X"]}}, {"name":"raw","type":
      {"type":"fixed","name":"Raw","size":8}}, {"name":"opt","type":["null",{"type":"record","name":"Sub",
      "fields":[{"name":"a","type":"int"},{"name":"b","type":"int"}]}],"default":null})");
  EXPECT_EQ(
      problems(v2, v1),
      (std::vector<std::string>{"MISSING_ENUM_SYMBOLS at /fields/2/type/symbols: [Y]",
                                "FIXED_SIZE_MISMATCH at /fields/3/type/size: expected: 16, found: 8",
                                // Union against union: each writer branch is checked against the whole reader union.
                                "MISSING_UNION_BRANCH at /fields/4/type/1: reader union lacking writer type: RECORD"}));
}

}  // namespace
}  // namespace ferry::avro
