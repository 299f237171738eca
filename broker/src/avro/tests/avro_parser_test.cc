#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "avro/avro_schema.h"

namespace ferry::avro {
namespace {

schema::schema_result<schema::schema_ptr> parse_text(const std::string& text,
                                                     const std::vector<schema::named_schema>& references = {},
                                                     schema::parse_limits limits = {}) {
  return parse(text, references, limits);
}

bool accepts(const std::string& text) { return parse_text(text).has_value(); }

std::string refusal(const std::string& text) {
  auto parsed = parse_text(text);
  return parsed ? std::string("accepted") : parsed.error().message;
}

TEST(AvroParser, AcceptsPrimitivesAsNamesAndObjects) {
  for (const char* type : {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}) {
    EXPECT_TRUE(accepts(std::string("\"") + type + "\"")) << type;
    EXPECT_TRUE(accepts(std::string(R"({"type":")") + type + "\"}")) << type;
  }
}

TEST(AvroParser, RefusesWhatIsNotASchema) {
  EXPECT_FALSE(accepts("not json"));
  EXPECT_FALSE(accepts(""));
  EXPECT_FALSE(accepts("42"));
  EXPECT_FALSE(accepts(R"("integer")"));
  EXPECT_FALSE(accepts(R"({"type":"com.acme.Unknown"})"));
  EXPECT_FALSE(accepts(R"({"type":{"type":"int"}})"));
  EXPECT_FALSE(accepts(R"({"name":"x"})"));
  EXPECT_FALSE(accepts(R"("int" "long")"));
}

TEST(AvroParser, CommentsOnlyBeforeTheEnd) {
  EXPECT_TRUE(accepts("/* a */ // b\n {\"type\": /* c */ \"int\"} \n\t"));
  // Avro refuses anything but whitespace after the schema, a comment included.
  EXPECT_FALSE(accepts("\"int\" // b\n"));
  EXPECT_FALSE(accepts("{\"type\":\"int\"} /* b */"));
  EXPECT_FALSE(accepts("[\"int\"] x"));
}

TEST(AvroParser, Records) {
  EXPECT_TRUE(accepts(R"({"type":"record","name":"R","fields":[]})"));
  EXPECT_TRUE(accepts(R"({"type":"error","name":"E","fields":[{"name":"m","type":"string"}]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R"})"));
  EXPECT_FALSE(accepts(R"({"type":"record","fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","fields":[{"name":"a"}]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","fields":[{"type":"int"}]})"));
  EXPECT_NE(refusal(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]})")
                .find("duplicate field 'a'"),
            std::string::npos);
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"up"}]})"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"IGNORE"}]})"));
}

TEST(AvroParser, ValidatesNames) {
  EXPECT_FALSE(accepts(R"({"type":"record","name":"1R","fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R-1","fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","namespace":"a.1b","fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","namespace":"a.","fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"a..R","fields":[]})"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":".R","fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","fields":[{"name":"a b","type":"int"}]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"int","fields":[]})"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":"a.int","fields":[]})"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":"Größe","fields":[{"name":"_é1","type":"int"}]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","aliases":["1x"],"fields":[]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","aliases":"x","fields":[]})"));
  // Field aliases are not validated as names.
  EXPECT_TRUE(accepts(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int","aliases":["1 x"]}]})"));
}

TEST(AvroParser, Enums) {
  EXPECT_TRUE(accepts(R"({"type":"enum","name":"E","symbols":["A","B"],"default":"A"})"));
  EXPECT_FALSE(accepts(R"({"type":"enum","name":"E","symbols":["A","A"]})"));
  EXPECT_FALSE(accepts(R"({"type":"enum","name":"E","symbols":["A","1B"]})"));
  EXPECT_FALSE(accepts(R"({"type":"enum","name":"E","symbols":["A"],"default":"C"})"));
  EXPECT_FALSE(accepts(R"({"type":"enum","name":"E"})"));
  EXPECT_FALSE(accepts(R"({"type":"enum","name":"E","symbols":[1]})"));
  // A default that is not text is no default, as Jackson's textValue() makes it.
  EXPECT_TRUE(accepts(R"({"type":"enum","name":"E","symbols":["A"],"default":1})"));
}

TEST(AvroParser, FixedArraysMaps) {
  EXPECT_TRUE(accepts(R"({"type":"fixed","name":"F","size":0})"));
  EXPECT_FALSE(accepts(R"({"type":"fixed","name":"F","size":-1})"));
  EXPECT_FALSE(accepts(R"({"type":"fixed","name":"F","size":1.0})"));
  EXPECT_FALSE(accepts(R"({"type":"fixed","name":"F","size":"4"})"));
  EXPECT_FALSE(accepts(R"({"type":"fixed","name":"F","size":4294967296})"));
  EXPECT_TRUE(accepts(R"({"type":"array","items":{"type":"map","values":"long"}})"));
  EXPECT_FALSE(accepts(R"({"type":"array"})"));
  EXPECT_FALSE(accepts(R"({"type":"map"})"));
}

TEST(AvroParser, Unions) {
  EXPECT_TRUE(accepts(R"(["null","int",{"type":"array","items":"int"},{"type":"map","values":"int"}])"));
  EXPECT_TRUE(accepts(R"([])"));
  EXPECT_FALSE(accepts(R"(["int","int"])"));
  EXPECT_FALSE(accepts(R"(["int",{"type":"int","x":1}])"));
  EXPECT_FALSE(accepts(R"([{"type":"array","items":"int"},{"type":"array","items":"long"}])"));
  EXPECT_FALSE(accepts(R"(["null",["int"]])"));
  EXPECT_TRUE(accepts(R"([{"type":"fixed","name":"A","size":1},{"type":"fixed","name":"B","size":1}])"));
  EXPECT_FALSE(accepts(R"([{"type":"fixed","name":"A","size":1},"A"])"));
}

TEST(AvroParser, NamespacesAndReferencesByName) {
  EXPECT_TRUE(accepts(R"({"type":"record","name":"R","namespace":"a.b","fields":[
      {"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}},
      {"name":"e2","type":"E"},{"name":"e3","type":"a.b.E"}]})"));
  EXPECT_FALSE(accepts(R"({"type":"record","name":"R","namespace":"a.b","fields":[
      {"name":"e","type":{"type":"enum","name":"E","namespace":"c","symbols":["X"]}},{"name":"e2","type":"E"}]})"));
  EXPECT_NE(refusal(R"({"type":"record","name":"R","fields":[{"name":"x","type":"Missing"}]})").find("undefined"),
            std::string::npos);
  // Java 1.12 resolves names at the end of the text, so a type may be used before its definition.
  EXPECT_TRUE(accepts(R"([{"type":"record","name":"A","fields":[{"name":"b","type":"B"}]},
                         {"type":"record","name":"B","fields":[]}])"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]})"));
}

TEST(AvroParser, DefaultsReachingRecordsStillBeingResolved) {
  // Java 1.12 re-checks defaults while it copies the resolved types; a default that reaches a record whose copy
  // has no fields yet fails there ("Schema fields not set yet"), even where the data would be valid.
  EXPECT_FALSE(accepts(R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},
      {"name":"next","type":["L","null"],"default":{"v":1}}]})"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":"L","fields":[{"name":"v","type":"int"},
      {"name":"next","type":["null","L"],"default":null}]})"));
  // A type used before its definition is an empty record while the text is parsed, then the type it names.
  EXPECT_TRUE(accepts(R"([{"type":"record","name":"A","fields":[{"name":"b","type":"B","default":{}}]},
      {"type":"record","name":"B","fields":[{"name":"x","type":"int","default":1}]}])"));
  EXPECT_FALSE(accepts(R"([{"type":"record","name":"A","fields":[{"name":"b","type":"B","default":"x"}]},
      {"type":"enum","name":"B","symbols":["x"]}])"));
  EXPECT_FALSE(accepts(R"([{"type":"record","name":"A","fields":[{"name":"b","type":"B","default":{"x":"s"}}]},
      {"type":"record","name":"B","fields":[{"name":"x","type":"int"}]}])"));
}

TEST(AvroParser, Redefinition) {
  EXPECT_FALSE(accepts(R"([{"type":"fixed","name":"A","size":1},{"type":"record","name":"R","fields":[
      {"name":"a","type":{"type":"fixed","name":"A","size":2}}]}])"));
  EXPECT_TRUE(accepts(R"({"type":"record","name":"R","fields":[
      {"name":"a","type":{"type":"fixed","name":"A","size":2}},
      {"name":"b","type":{"type":"fixed","name":"A","size":2}}]})"));
}

TEST(AvroParser, Defaults) {
  auto with_default = [](const std::string& type, const std::string& value) {
    return accepts(R"({"type":"record","name":"R","fields":[{"name":"f","type":)" + type + R"(,"default":)" + value +
                   "}]}");
  };
  EXPECT_TRUE(with_default(R"("int")", "1"));
  EXPECT_FALSE(with_default(R"("int")", "\"1\""));
  EXPECT_FALSE(with_default(R"("int")", "2147483648"));
  EXPECT_FALSE(with_default(R"("int")", "1.5"));
  EXPECT_TRUE(with_default(R"("long")", "2147483648"));
  EXPECT_FALSE(with_default(R"("long")", "9223372036854775808"));
  EXPECT_TRUE(with_default(R"("double")", "1"));
  EXPECT_TRUE(with_default(R"("double")", "\"NaN\""));
  EXPECT_TRUE(with_default(R"("float")", "\"1.5\""));
  EXPECT_FALSE(with_default(R"("float")", "\"abc\""));
  EXPECT_TRUE(with_default(R"("string")", "\"x\""));
  EXPECT_TRUE(with_default(R"("bytes")", "\"\\u00ff\""));
  EXPECT_FALSE(with_default(R"("boolean")", "0"));
  EXPECT_TRUE(with_default(R"("null")", "null"));
  EXPECT_TRUE(with_default(R"({"type":"array","items":"int"})", "[1,2]"));
  EXPECT_FALSE(with_default(R"({"type":"array","items":"int"})", "[1,\"2\"]"));
  EXPECT_TRUE(with_default(R"({"type":"map","values":"int"})", R"({"a":1})"));
  // Enum defaults are only checked to be text, as Java does.
  EXPECT_TRUE(with_default(R"({"type":"enum","name":"E","symbols":["A"]})", "\"Z\""));
  // Java 1.12 accepts a union default matching any branch.
  EXPECT_TRUE(with_default(R"(["null","int"])", "null"));
  EXPECT_TRUE(with_default(R"(["null","int"])", "1"));
  EXPECT_FALSE(with_default(R"(["null","int"])", "\"x\""));
  EXPECT_TRUE(with_default(R"({"type":"record","name":"S","fields":[{"name":"a","type":"int"}]})", R"({"a":1})"));
  EXPECT_FALSE(with_default(R"({"type":"record","name":"S","fields":[{"name":"a","type":"int"}]})", "{}"));
  EXPECT_TRUE(with_default(R"({"type":"record","name":"S","fields":[{"name":"a","type":"int","default":0}]})", "{}"));
}

TEST(AvroParser, InvalidLogicalTypesAreIgnored) {
  EXPECT_TRUE(accepts(R"({"type":"bytes","logicalType":"decimal","precision":-1})"));
  EXPECT_TRUE(accepts(R"({"type":"string","logicalType":"no-such-type"})"));
  EXPECT_TRUE(accepts(R"({"type":"int","logicalType":"timestamp-millis"})"));
}

TEST(AvroParser, References) {
  const std::vector<schema::named_schema> references = {
      {"com.acme.Address", R"({"type":"record","name":"Address","namespace":"com.acme","fields":[
          {"name":"city","type":"string"}]})"},
      {"com.acme.Kind", R"({"type":"enum","name":"Kind","namespace":"com.acme","symbols":["A"]})"}};
  auto parsed = parse_text(R"({"type":"record","name":"User","namespace":"com.acme","fields":[
      {"name":"address","type":"Address"},{"name":"kind","type":"com.acme.Kind"}]})",
                           references);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value()->canonical(),
            R"({"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"address","type":"Address"},)"
            R"({"name":"kind","type":"Kind"}]})");
  EXPECT_FALSE(parse_text(R"({"type":"record","name":"U","fields":[{"name":"a","type":"Address"}]})", references));
  auto bad_reference = parse_text("\"int\"", {{"x", "{"}});
  ASSERT_FALSE(bad_reference);
  EXPECT_NE(bad_reference.error().message.find("reference 'x'"), std::string::npos);
}

TEST(AvroParser, ReferencesNestedTypesAndRedefinitions) {
  const std::vector<schema::named_schema> references = {{"a.Address", R"({"type":"record","name":"a.Address","fields":[
          {"name":"country","type":{"type":"enum","name":"Country","symbols":["FR"]}}]})"}};
  // Java's toString(references) knows only each reference's top-level name: a nested type is written in full.
  auto parsed = parse_text(R"({"type":"record","name":"a.U","fields":[{"name":"h","type":"Address"},
      {"name":"c","type":"Country"}]})",
                           references);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value()->canonical(),
            R"({"type":"record","name":"U","namespace":"a","fields":[{"name":"h","type":"Address"},)"
            R"({"name":"c","type":{"type":"enum","name":"Country","symbols":["FR"]}}]})");
  // A referenced type may be defined again only identically.
  EXPECT_TRUE(parse_text(R"({"type":"enum","name":"a.Country","symbols":["FR"]})", references));
  EXPECT_FALSE(parse_text(R"({"type":"enum","name":"a.Country","symbols":["DE"]})", references));
}

TEST(AvroParser, Limits) {
  std::string deep = "\"int\"";
  for (int i = 0; i < 100; ++i) deep = R"({"type":"array","items":)" + deep + "}";
  EXPECT_NE(refusal(deep).find("nested deeper"), std::string::npos);
  // Far deeper than any stack would survive if parsing recursed without the bound.
  EXPECT_FALSE(accepts(std::string(100000, '[') + "\"int\"" + std::string(100000, ']')));
  std::string fields;
  for (int i = 0; i < 50; ++i)
    fields += std::string(i == 0 ? "" : ",") + R"({"name":"f)" + std::to_string(i) + R"(","type":"int"})";
  const std::string wide = R"({"type":"record","name":"R","fields":[)" + fields + "]}";
  EXPECT_TRUE(parse_text(wide, {}, {.max_depth = 64, .max_elements = 100}));
  auto refused = parse_text(wide, {}, {.max_depth = 64, .max_elements = 10});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("more than 10"), std::string::npos);
  std::string deep_default = "1";
  for (int i = 0; i < 1000; ++i) deep_default = "[" + deep_default + "]";
  EXPECT_FALSE(
      accepts(R"({"type":"record","name":"R","fields":[{"name":"f","type":"int","x":)" + deep_default + "}]}"));
}

}  // namespace
}  // namespace ferry::avro
