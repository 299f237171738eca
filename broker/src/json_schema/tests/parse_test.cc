#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "json_schema/json_schema.h"

namespace ferry::json_schema {
namespace {

schema::schema_result<schema::schema_ptr> parse_text(const std::string& text,
                                                     const std::vector<schema::named_schema>& refs = {},
                                                     schema::parse_limits limits = {}) {
  return parse(text, refs, limits);
}

std::string refusal(const std::string& text, const std::vector<schema::named_schema>& refs = {},
                    schema::parse_limits limits = {}) {
  auto parsed = parse_text(text, refs, limits);
  EXPECT_FALSE(parsed) << text;
  return parsed ? std::string() : parsed.error().message;
}

TEST(json_schema_parse, accepts_objects_and_booleans) {
  for (const char* text : {"{}", "true", "false", R"({"type":"string"})", R"({"type":["string","null"]})",
                           R"({"properties":{"a":{}},"required":["a"]})", R"({"items":[{"type":"string"},true]})",
                           R"({"allOf":[{"type":"string"},{"maxLength":3}]})", R"({"not":{"type":"null"}})",
                           R"({"enum":[1,"a",null]})", R"({"const":{"a":[1]}})", R"({"if":{},"then":{},"else":{}})",
                           R"({"dependencies":{"a":["b"],"c":{"required":["d"]}}})",
                           R"({"type":"number","exclusiveMaximum":true,"maximum":5})"}) {
    auto parsed = parse_text(text);
    ASSERT_TRUE(parsed) << text << ": " << parsed.error().message;
    EXPECT_EQ(parsed.value()->type(), schema::schema_type::json);
  }
}

TEST(json_schema_parse, refuses_what_confluent_refuses) {
  EXPECT_NE(refusal("{").find("Invalid JSON"), std::string::npos);
  EXPECT_NE(refusal("").find("Invalid JSON"), std::string::npos);
  EXPECT_NE(refusal("{} {}").find("Invalid JSON"), std::string::npos);
  EXPECT_NE(refusal("[]").find("object or a boolean"), std::string::npos);
  EXPECT_NE(refusal("\"string\"").find("object or a boolean"), std::string::npos);
  EXPECT_NE(refusal("42").find("object or a boolean"), std::string::npos);
  EXPECT_EQ(refusal(R"({"type":5})"), "Invalid JSON schema: type must be a string or an array at #/type");
  EXPECT_EQ(refusal(R"({"type":"text"})"), "Invalid JSON schema: unknown type 'text' at #/type");
  EXPECT_EQ(refusal(R"({"properties":{"a":{"properties":[]}}})"),
            "Invalid JSON schema: properties must be an object at #/properties/a/properties");
  EXPECT_EQ(refusal(R"({"properties":{"a/b":3}})"),
            "Invalid JSON schema: a schema must be an object or a boolean at #/properties/a~1b");
  EXPECT_EQ(refusal(R"({"required":"a"})"), "Invalid JSON schema: required must be an array of names at #/required");
  EXPECT_EQ(refusal(R"({"required":[1]})"), "Invalid JSON schema: required must be an array of names at #/required");
  EXPECT_EQ(refusal(R"({"type":"string","maxLength":"3"})"),
            "Invalid JSON schema: maxLength must be an integer at #/maxLength");
  EXPECT_EQ(refusal(R"({"minLength":1.5})"), "Invalid JSON schema: minLength must be an integer at #/minLength");
  EXPECT_EQ(refusal(R"({"minimum":"0"})"), "Invalid JSON schema: minimum must be a number at #/minimum");
  EXPECT_EQ(refusal(R"({"multipleOf":0})"), "Invalid JSON schema: multipleOf must be a number above 0 at #/multipleOf");
  EXPECT_EQ(refusal(R"({"pattern":1})"), "Invalid JSON schema: pattern must be a string at #/pattern");
  EXPECT_EQ(refusal(R"({"enum":"a"})"), "Invalid JSON schema: enum must be an array at #/enum");
  EXPECT_EQ(refusal(R"({"anyOf":{}})"), "Invalid JSON schema: anyOf must be an array at #/anyOf");
  EXPECT_EQ(refusal(R"({"oneOf":[{},1]})"),
            "Invalid JSON schema: a schema must be an object or a boolean at #/oneOf/1");
  EXPECT_EQ(refusal(R"({"not":[]})"), "Invalid JSON schema: a schema must be an object or a boolean at #/not");
  EXPECT_EQ(refusal(R"({"items":[{},"x"]})"),
            "Invalid JSON schema: a schema must be an object or a boolean at #/items/1");
  EXPECT_EQ(refusal(R"({"additionalProperties":"no"})"),
            "Invalid JSON schema: a schema must be an object or a boolean at #/additionalProperties");
  EXPECT_EQ(refusal(R"({"uniqueItems":"yes"})"), "Invalid JSON schema: uniqueItems must be a boolean at #/uniqueItems");
  EXPECT_EQ(refusal(R"({"dependencies":{"a":[1]}})"),
            "Invalid JSON schema: a dependency must name properties at #/dependencies/a");
  EXPECT_EQ(refusal(R"({"definitions":{"a":2}})"),
            "Invalid JSON schema: a schema must be an object or a boolean at #/definitions/a");
  EXPECT_EQ(refusal(R"({"title":7})"), "Invalid JSON schema: title must be a string at #/title");
  EXPECT_EQ(refusal(R"({"$ref":7})"), "Invalid JSON schema: $ref must be a string at #/$ref");
  // Out of double range: nlohmann refuses it (Confluent keeps it as a BigDecimal).
  EXPECT_NE(refusal(R"({"maximum":1e999})").find("Invalid JSON"), std::string::npos);
}

TEST(json_schema_parse, resolves_local_references) {
  EXPECT_TRUE(parse_text(R"({"definitions":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/a"}}})"));
  EXPECT_TRUE(parse_text(R"({"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}})"));
  // Confluent bridges definitions into $defs, not the other way round.
  EXPECT_TRUE(parse_text(R"({"definitions":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}})"));
  EXPECT_EQ(refusal(R"({"$defs":{"a":{}},"properties":{"x":{"$ref":"#/definitions/a"}}})"),
            "Invalid JSON schema: $ref '#/definitions/a' resolves nowhere at #/properties/x/$ref");
  EXPECT_TRUE(parse_text(R"({"properties":{"x":{"type":"string"},"y":{"$ref":"#/properties/x"}}})"));
  EXPECT_TRUE(parse_text(
      R"({"definitions":{"a~b":{}, "c/d":{}},"allOf":[{"$ref":"#/definitions/a~0b"},{"$ref":"#/definitions/c~1d"}]})"));
  EXPECT_TRUE(parse_text(R"({"items":[{"type":"string"}],"properties":{"x":{"$ref":"#/items/0"}}})"));
  EXPECT_TRUE(parse_text(R"({"type":"object","properties":{"next":{"$ref":"#"}}})"));
  EXPECT_NE(refusal(R"({"$ref":"#/nowhere"})").find("resolves nowhere at #/$ref"), std::string::npos);
  EXPECT_NE(refusal(R"({"$ref":"#anchor"})").find("resolves nowhere"), std::string::npos);
  EXPECT_NE(refusal(R"({"$ref":"other.json"})").find("resolves nowhere"), std::string::npos);
  EXPECT_NE(
      refusal(
          R"({"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"})")
          .find("$ref cycle"),
      std::string::npos);
}

TEST(json_schema_parse, resolves_named_references) {
  const std::vector<schema::named_schema> refs = {
      {"address.json",
       R"({"type":"object","properties":{"street":{"type":"string"}},"definitions":{"zip":{"type":"string"}}})"},
      {"customer.json", R"({"type":"object","properties":{"address":{"$ref":"address.json"}}})"}};
  EXPECT_TRUE(parse_text(R"({"properties":{"c":{"$ref":"customer.json"}}})", refs));
  EXPECT_TRUE(parse_text(R"({"properties":{"z":{"$ref":"address.json#/definitions/zip"}}})", refs));
  EXPECT_TRUE(
      parse_text(R"({"$id":"https://example.com/schemas/order","properties":{"a":{"$ref":"address.json"}}})", refs));
  EXPECT_TRUE(parse_text(R"({"$id":"https://example.com/schemas/order",
                             "properties":{"a":{"$ref":"https://example.com/schemas/address.json"}}})",
                         refs));
  EXPECT_NE(refusal(R"({"properties":{"z":{"$ref":"address.json#/definitions/nope"}}})", refs).find("resolves nowhere"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"$ref":"missing.json"})", refs).find("$ref 'missing.json' resolves nowhere at #/$ref"),
            std::string::npos);
  // A reference is checked where it is used, and errors in it name it.
  EXPECT_EQ(refusal(R"({"$ref":"bad.json"})", {{"bad.json", R"({"type":4})"}}),
            "Invalid JSON schema: type must be a string or an array at #/type in reference 'bad.json'");
  EXPECT_NE(refusal("{}", {{"bad.json", "{"}}).find("Invalid JSON in reference 'bad.json'"), std::string::npos);
}

TEST(json_schema_parse, canonical_keeps_key_order_and_normalized_sorts_keys) {
  auto parsed = parse_text(
      " {\n \"type\" : \"object\", \"properties\": {\"b\": {\"type\":\"integer\"}, \"a\": {}},"
      " \"$schema\":\"http://json-schema.org/draft-07/schema#\", \"x\": [1, 2.5, -3, true, null]}");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(
      parsed.value()->canonical(),
      R"({"type":"object","properties":{"b":{"type":"integer"},"a":{}},"$schema":"http://json-schema.org/draft-07/schema#","x":[1,2.5,-3,true,null]})");
  EXPECT_EQ(
      parsed.value()->normalized(),
      R"({"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{},"b":{"type":"integer"}},"type":"object","x":[1,2.5,-3,true,null]})");
  auto boolean = parse_text(" true ");
  ASSERT_TRUE(boolean);
  EXPECT_EQ(boolean.value()->canonical(), "true");
}

TEST(json_schema_parse, canonical_escapes_as_jackson) {
  auto parsed = parse_text(R"({"description":"a\"b\\c\/d\n\t\u0001\u00e9\u2028"})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed.value()->canonical(), "{\"description\":\"a\\\"b\\\\c/d\\n\\t\\u0001\xc3\xa9\xe2\x80\xa8\"}");
}

TEST(json_schema_parse, repeated_key_keeps_first_place_and_last_value) {
  auto parsed = parse_text(R"({"type":"string","title":"x","type":"integer"})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed.value()->canonical(), R"({"type":"integer","title":"x"})");
}

TEST(json_schema_parse, depth_is_bounded_without_recursion) {
  schema::parse_limits limits;
  limits.max_depth = 4;
  // Four levels of nested properties need eight JSON levels.
  std::string four = R"({"properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{}}}}}}}}})";
  EXPECT_FALSE(parse_text(four, {}, limits));
  std::string three = R"({"properties":{"a":{"properties":{"b":{"properties":{"c":{}}}}}}})";
  EXPECT_TRUE(parse_text(three, {}, limits));
  EXPECT_EQ(refusal(four, {}, limits),
            "Invalid JSON in the schema: nesting deeper than 8 levels at "
            "#/properties/a/properties/b/properties/c/properties/d");

  // Far deeper than any stack could recurse: refused, not crashed.
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += R"({"items":)";
  deep += "{}";
  deep += std::string(200000, '}');
  EXPECT_NE(refusal(deep).find("nesting deeper than 128 levels at #/items/items/items"), std::string::npos);
  std::string arrays = R"({"enum":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(refusal(arrays).find("at #/enum/0/0/0"), std::string::npos);
}

TEST(json_schema_parse, messages_stay_short) {
  const std::string name(5000, 'x');
  const std::string message = refusal(R"({"properties":{")" + name + R"(":3}})");
  EXPECT_LT(message.size(), 400U);
  EXPECT_NE(message.find("a schema must be an object or a boolean at #/properties/xxx"), std::string::npos);
  EXPECT_LT(refusal(R"({"type":")" + name + R"("})").size(), 400U);
  EXPECT_LT(refusal(R"({")" + name).size(), 400U);
}

TEST(json_schema_parse, elements_are_bounded) {
  schema::parse_limits limits;
  limits.max_elements = 10;
  std::string text = R"({"properties":{)";
  for (int i = 0; i < 20; ++i) text += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{}";
  text += "}}";
  EXPECT_EQ(refusal(text, {}, limits), "Invalid JSON schema: more than 10 schemas");
  limits.max_elements = 100;
  EXPECT_TRUE(parse_text(text, {}, limits));
}

}  // namespace
}  // namespace ferry::json_schema
