// Compatibility through $ref (local, recursive and across referenced schemas), the messages the registry returns,
// and the bounds on a comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "json_schema/json_schema.h"

namespace ferry::json_schema {
namespace {

schema::schema_ptr must_parse(const std::string& text, const std::vector<schema::named_schema>& refs = {}) {
  auto parsed = parse(text, refs, {});
  EXPECT_TRUE(parsed) << text << ": " << (parsed ? "" : parsed.error().message);
  return parsed ? parsed.value() : nullptr;
}

std::vector<std::string> backward(const std::string& old_text, const std::string& new_text,
                                  const std::vector<schema::named_schema>& old_refs = {},
                                  const std::vector<schema::named_schema>& new_refs = {}) {
  auto old_schema = must_parse(old_text, old_refs);
  auto new_schema = must_parse(new_text, new_refs);
  if (!old_schema || !new_schema) return {"unparsed"};
  return new_schema->backward_incompatibilities(*old_schema);
}

using strings = std::vector<std::string>;

TEST(json_schema_references, messages_name_the_difference_and_its_path) {
  EXPECT_EQ(backward(R"({"type":"object","properties":{"name":{"type":"string"}}})",
                     R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}}})"),
            strings{"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL at #/properties/age"});
  EXPECT_EQ(backward(R"({"type":"string"})", R"({"type":"integer"})"), strings{"TYPE_CHANGED at #/"});
  EXPECT_EQ(backward(R"({"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false})",
                     R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b"],
                        "additionalProperties":false})"),
            strings{"REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL at #/properties/b"});
}

TEST(json_schema_references, forward_is_the_reverse_call) {
  auto v1 = must_parse(R"({"type":"object","properties":{"a":{"type":"string","maxLength":5}}})");
  auto v2 = must_parse(R"({"type":"object","properties":{"a":{"type":"string","maxLength":10}}})");
  EXPECT_TRUE(v2->backward_incompatibilities(*v1).empty());
  EXPECT_EQ(v1->backward_incompatibilities(*v2), strings{"MAX_LENGTH_DECREASED at #/properties/a/maxLength"});
}

TEST(json_schema_references, local_refs_are_followed) {
  const std::string old_text =
      R"({"definitions":{"name":{"type":"string","maxLength":10}},"properties":{"n":{"$ref":"#/definitions/name"}}})";
  EXPECT_TRUE(backward(old_text, R"({"definitions":{"name":{"type":"string","maxLength":20}},
                                     "properties":{"n":{"$ref":"#/definitions/name"}}})")
                  .empty());
  EXPECT_EQ(
      backward(old_text,
               R"({"$defs":{"name":{"type":"string","maxLength":5}},"properties":{"n":{"$ref":"#/$defs/name"}}})"),
      strings{"MAX_LENGTH_DECREASED at #/properties/n/maxLength"});
  // A $ref on one side and the schema inline on the other compare as the same schema.
  EXPECT_TRUE(backward(old_text, R"({"properties":{"n":{"type":"string","maxLength":10}}})").empty());
}

TEST(json_schema_references, recursive_schemas_terminate) {
  const std::string list = R"({"type":"object","properties":{"value":{"type":"integer"},"next":{"$ref":"#"}}})";
  EXPECT_TRUE(backward(list, list).empty());
  EXPECT_EQ(backward(list, R"({"type":"object","properties":{"value":{"type":"string"},"next":{"$ref":"#"}}})"),
            (strings{"TYPE_CHANGED at #/properties/next/properties/value", "TYPE_CHANGED at #/properties/value"}));
  const std::string tree =
      R"({"definitions":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/definitions/node"}},
          "label":{"type":"string"}}}},"$ref":"#/definitions/node"})";
  EXPECT_TRUE(backward(tree, tree).empty());
  EXPECT_FALSE(backward(tree, R"({"definitions":{"node":{"type":"object","properties":{"children":{"type":"array",
          "items":{"$ref":"#/definitions/node"}},"label":{"type":"string","maxLength":3}}}},"$ref":"#/definitions/node"})")
                   .empty());
}

// Confluent's CircularRefSchemaDiffTest: oneOf branches whose properties come back to the oneOf through $ref.
std::string circular_schema(int branches, int circular_properties) {
  std::string s = R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{)";
  s += R"("SimpleId":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},)";
  s += R"("Base":{"type":"object","properties":{"name":{"type":"string"}}},)";
  s += R"("ProductOrId":{"oneOf":[{"$ref":"#/$defs/SimpleId"},{"$ref":"#/$defs/Product"}]},)";
  for (int i = 0; i < branches; ++i) {
    s += "\"Type" + std::to_string(i) + R"(":{"$ref":"#/$defs/Base","type":"object","properties":{)";
    for (int p = 0; p < circular_properties; ++p)
      s += "\"ref" + std::to_string(p) + R"(":{"$ref":"#/$defs/ProductOrId"},)";
    s += R"("tag":{"type":"string","const":"type)" + std::to_string(i) + R"("}},"required":["ref0","tag"]},)";
  }
  s += R"("Product":{"oneOf":[)";
  for (int i = 0; i < branches; ++i)
    s += (i != 0 ? "," : "") + std::string(R"({"$ref":"#/$defs/Type)") + std::to_string(i) + "\"}";
  s += R"(]}},"$ref":"#/$defs/Product"})";
  return s;
}

TEST(json_schema_references, circular_refs_through_one_of_terminate) {
  EXPECT_TRUE(backward(circular_schema(2, 1), circular_schema(2, 1)).empty());
  EXPECT_TRUE(backward(circular_schema(12, 5), circular_schema(12, 5)).empty());
}

TEST(json_schema_references, named_references_are_compared_through) {
  const std::vector<schema::named_schema> v1 = {
      {"address.json", R"({"type":"object","properties":{"street":{"type":"string"}}})"}};
  const std::vector<schema::named_schema> v2 = {
      {"address.json", R"({"type":"object","properties":{"street":{"type":"string"},"zip":{}}})"}};
  const std::vector<schema::named_schema> v3 = {
      {"address.json", R"({"type":"object","properties":{"street":{"type":"integer"}}})"}};
  const std::string customer = R"({"type":"object","properties":{"address":{"$ref":"address.json"}}})";
  EXPECT_TRUE(backward(customer, customer, v1, v2).empty());
  EXPECT_EQ(backward(customer, customer, v1, v3), strings{"TYPE_CHANGED at #/properties/address/properties/street"});
  // References of references, in dependency order.
  const std::vector<schema::named_schema> chain = {
      {"street.json", R"({"type":"string"})"},
      {"address.json", R"({"type":"object","properties":{"street":{"$ref":"street.json"}}})"}};
  EXPECT_TRUE(backward(customer, customer, v1, chain).empty());
}

class other_format final : public schema::parsed_schema {
 public:
  [[nodiscard]] schema::schema_type type() const override { return schema::schema_type::avro; }
  [[nodiscard]] std::string canonical() const override { return "\"string\""; }
  [[nodiscard]] std::string normalized() const override { return "\"string\""; }
  [[nodiscard]] std::vector<std::string> backward_incompatibilities(const schema::parsed_schema&) const override {
    return {};
  }
};

TEST(json_schema_references, another_format_is_incompatible) {
  auto schema = must_parse("{}");
  EXPECT_EQ(schema->backward_incompatibilities(other_format()),
            strings{"Incompatible because of different schema type"});
}

TEST(json_schema_references, comparisons_deeper_than_the_bound_are_refused) {
  // 300 definitions, each an object whose property refers to the next: a chain no stack should follow to the end.
  auto chain = [](const char* last_type) {
    std::string s = R"({"definitions":{)";
    for (int i = 0; i < 300; ++i)
      s += "\"d" + std::to_string(i) + R"(":{"type":"object","properties":{"p":{"$ref":"#/definitions/d)" +
           std::to_string(i + 1) + "\"}}},";
    s += R"("d300":{"type":")" + std::string(last_type) + R"("}},"$ref":"#/definitions/d0"})";
    return s;
  };
  auto v1 = must_parse(chain("string"));
  auto v2 = must_parse(chain("integer"));
  const auto found = v2->backward_incompatibilities(*v1);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].rfind("SCHEMA_TOO_DEEP_TO_COMPARE at #/properties/p/properties/p", 0), 0U) << found[0];
}

TEST(json_schema_references, comparisons_of_too_many_pairs_are_refused) {
  // 450 × 450 branches to match: more pairs than a comparison may visit.
  std::string branches;
  for (int i = 0; i < 450; ++i) branches += (i != 0 ? "," : "") + std::string(R"({"const":)") + std::to_string(i) + "}";
  auto v1 = must_parse(R"({"oneOf":[)" + branches + "]}");
  auto v2 = must_parse(R"({"oneOf":[)" + branches + R"(,{"const":"new"}]})");
  const auto found = v2->backward_incompatibilities(*v1);
  ASSERT_FALSE(found.empty());
  EXPECT_TRUE(std::any_of(found.begin(), found.end(), [](const std::string& message) {
    return message.rfind("SCHEMA_TOO_COMPLEX_TO_COMPARE at #/oneOf/", 0) == 0;
  })) << found.front();
}

TEST(json_schema_references, siblings_of_ref_count_from_2019_09) {
  // Draft 7 ignores them, as everit does.
  EXPECT_TRUE(backward(R"({"definitions":{"a":{"type":"object"}},"$ref":"#/definitions/a","maxProperties":3})",
                       R"({"definitions":{"a":{"type":"object"}},"$ref":"#/definitions/a","maxProperties":1})")
                  .empty());
  const std::string dialect = R"("$schema":"https://json-schema.org/draft/2020-12/schema",)";
  EXPECT_FALSE(backward("{" + dialect + R"("$defs":{"a":{"type":"object"}},"$ref":"#/$defs/a","maxProperties":3})",
                        "{" + dialect + R"("$defs":{"a":{"type":"object"}},"$ref":"#/$defs/a","maxProperties":1})")
                   .empty());
}

TEST(json_schema_references, sums_and_products) {
  EXPECT_EQ(backward(R"({"type":"string"})", R"({"oneOf":[{"type":"string"},{"type":"null"}]})"), strings{});
  // A sum type against a single schema is a change of type, as Confluent's diff sees it.
  EXPECT_EQ(backward(R"({"type":["string","null"]})", R"({"type":"string"})"), strings{"TYPE_CHANGED at #/"});
  EXPECT_EQ(backward(R"({"allOf":[{"type":"string"},{"maxLength":5}]})", R"({"type":"string"})"), strings{});
  EXPECT_EQ(backward(R"({"not":{"type":"string"}})", R"({"not":{"type":["string","null"]}})"),
            strings{"NOT_TYPE_EXTENDED at #/not"});
}

}  // namespace
}  // namespace ferry::json_schema
