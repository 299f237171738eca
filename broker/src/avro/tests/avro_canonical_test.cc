#include <gtest/gtest.h>

#include <string>

#include "avro/avro_json.h"
#include "avro/avro_schema.h"

namespace ferry::avro {
namespace {

std::string canonical(const std::string& text) {
  auto parsed = parse(text, {}, {});
  return parsed ? parsed.value()->canonical() : "refused: " + parsed.error().message;
}

std::string normalized(const std::string& text) {
  auto parsed = parse(text, {}, {});
  return parsed ? parsed.value()->normalized() : "refused: " + parsed.error().message;
}

TEST(AvroCanonical, Primitives) {
  EXPECT_EQ(canonical(R"( { "type" : "int" } )"), R"("int")");
  EXPECT_EQ(canonical(R"({"type":"string","avro.java.string":"String"})"),
            R"({"type":"string","avro.java.string":"String"})");
  EXPECT_EQ(canonical(R"({"logicalType":"decimal","type":"bytes","precision":4,"scale":2})"),
            R"({"type":"bytes","logicalType":"decimal","precision":4,"scale":2})");
}

TEST(AvroCanonical, RecordLayoutInJavaOrder) {
  EXPECT_EQ(
      canonical(R"({"aliases":["Old"],"x-prop":1,"fields":[{"order":"descending","default":1,"doc":"d","type":"int",
        "name":"a","aliases":["b","b"],"p":true}],"doc":"a user","namespace":"com.acme","name":"User","type":"record"})"),
      R"({"type":"record","name":"User","namespace":"com.acme","doc":"a user","fields":[{"name":"a","type":"int",)"
      R"("doc":"d","default":1,"order":"descending","aliases":["b"],"p":true}],"x-prop":1,"aliases":["Old"]})");
}

TEST(AvroCanonical, NamedTypesWrittenOnceAndNamespacesRelative) {
  EXPECT_EQ(
      canonical(R"({"type":"record","name":"a.R","fields":[
      {"name":"x","type":{"type":"fixed","name":"F","size":2}},
      {"name":"y","type":"F"},
      {"name":"z","type":{"type":"enum","name":"b.E","symbols":["A"],"default":"A"}},
      {"name":"w","type":"b.E"},
      {"name":"v","type":{"type":"record","name":"N","namespace":"","fields":[]}}]})"),
      R"({"type":"record","name":"R","namespace":"a","fields":[)"
      R"({"name":"x","type":{"type":"fixed","name":"F","size":2}},{"name":"y","type":"F"},)"
      R"({"name":"z","type":{"type":"enum","name":"E","namespace":"b","symbols":["A"],"default":"A"}},)"
      R"({"name":"w","type":"b.E"},{"name":"v","type":{"type":"record","name":"N","namespace":"","fields":[]}}]})");
}

TEST(AvroCanonical, ContainersUnionsAndRecursion) {
  EXPECT_EQ(canonical(R"({"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"],
      "default":null},{"name":"kids","type":{"type":"array","items":"Node"}},
      {"name":"m","type":{"type":"map","values":"long","p":"q"}}]})"),
            R"({"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"],"default":null},)"
            R"({"name":"kids","type":{"type":"array","items":"Node"}},)"
            R"({"name":"m","type":{"type":"map","values":"long","p":"q"}}]})");
}

TEST(AvroCanonical, DefaultsAsJacksonWritesThem) {
  EXPECT_EQ(canonical(R"({"type":"record","name":"R","fields":[{"name":"d","type":"double","default":1e2},
      {"name":"f","type":"float","default":"NaN"},{"name":"s","type":"string","default":"a\"\u0001\n/é"}]})"),
            R"({"type":"record","name":"R","fields":[{"name":"d","type":"double","default":100.0},)"
            R"({"name":"f","type":"float","default":"NaN"},)"
            R"({"name":"s","type":"string","default":"a\"\u0001\n/é"}]})");
}

TEST(AvroCanonical, TypeNamedTypesAreQualified) {
  EXPECT_EQ(canonical(R"({"type":"record","name":"R","namespace":"n","fields":[
      {"name":"a","type":{"type":"fixed","name":"record","size":1}},{"name":"b","type":"record"}]})"),
            R"({"type":"record","name":"R","namespace":"n","fields":[)"
            R"({"name":"a","type":{"type":"fixed","name":"record","size":1}},{"name":"b","type":"n.record"}]})");
}

TEST(AvroCanonical, NormalizedWritesFullNames) {
  EXPECT_EQ(normalized(R"({"type":"record","name":"R","namespace":"a","aliases":["Q"],"fields":[
      {"name":"x","type":{"type":"fixed","name":"F","size":2}},{"name":"y","type":"F"}]})"),
            R"({"type":"record","name":"a.R","fields":[{"name":"x","type":{"type":"fixed","name":"a.F","size":2}},)"
            R"({"name":"y","type":"a.F"}],"aliases":["a.Q"]})");
  EXPECT_EQ(normalized(R"({"type":"record","name":"a.R","fields":[]})"),
            normalized(R"({"type":"record","name":"R","namespace":"a","fields":[]})"));
}

TEST(AvroJson, JavaDoubleLayout) {
  EXPECT_EQ(java_double(1.0), "1.0");
  EXPECT_EQ(java_double(-0.5), "-0.5");
  EXPECT_EQ(java_double(0.001), "0.001");
  EXPECT_EQ(java_double(0.0001), "1.0E-4");
  EXPECT_EQ(java_double(1234567.0), "1234567.0");
  EXPECT_EQ(java_double(12345678.0), "1.2345678E7");
  EXPECT_EQ(java_double(1e21), "1.0E21");
  EXPECT_EQ(java_double(0.0), "0.0");
}

}  // namespace
}  // namespace ferry::avro
