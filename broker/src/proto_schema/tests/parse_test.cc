#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proto_schema/proto_schema.h"

namespace ferry::proto_schema {
namespace {

namespace pb = google::protobuf;

std::string base64(const std::string& bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    for (const int shift : {18, 12, 6, 0}) out.push_back(alphabet[(n >> shift) & 63]);
  }
  if (i + 1 == bytes.size()) {
    const auto n = static_cast<unsigned char>(bytes[i]) << 16;
    out += {alphabet[(n >> 18) & 63], alphabet[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {alphabet[(n >> 18) & 63], alphabet[(n >> 12) & 63], alphabet[(n >> 6) & 63], '='};
  }
  return out;
}

std::string base64(const pb::FileDescriptorProto& file) { return base64(file.SerializeAsString()); }

pb::FieldDescriptorProto* add_field(pb::DescriptorProto& message, const std::string& name, int number,
                                    pb::FieldDescriptorProto::Type type) {
  auto* field = message.add_field();
  field->set_name(name);
  field->set_number(number);
  field->set_type(type);
  field->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);
  field->set_json_name(name);  // what protoc writes into the descriptors it embeds
  return field;
}

// shop/order.proto as protoc would describe it: `message Order { string id = 1; int64 total_cents = 2; }`.
pb::FileDescriptorProto order_descriptor() {
  pb::FileDescriptorProto file;
  file.set_name("shop/order.proto");
  file.set_package("shop");
  file.set_syntax("proto3");
  auto* order = file.add_message_type();
  order->set_name("Order");
  add_field(*order, "id", 1, pb::FieldDescriptorProto::TYPE_STRING);
  add_field(*order, "total_cents", 2, pb::FieldDescriptorProto::TYPE_INT64)->set_json_name("totalCents");
  return file;
}

constexpr const char* order_text = R"(syntax = "proto3";
package shop;
message Order {
  string id = 1;
  int64 total_cents = 2;
})";

schema::schema_ptr must_parse(const std::string& text, const std::vector<schema::named_schema>& references = {},
                              const schema::parse_limits& limits = {}) {
  auto parsed = parse(text, references, limits);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message);
  return parsed ? parsed.value() : nullptr;
}

std::string refusal(const std::string& text, const std::vector<schema::named_schema>& references = {},
                    const schema::parse_limits& limits = {}) {
  auto parsed = parse(text, references, limits);
  EXPECT_FALSE(parsed) << text;
  return parsed ? "" : parsed.error().message;
}

TEST(proto_schema_parse, text_renders_as_libprotobuf_writes_it) {
  const auto schema = must_parse(order_text);
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->type(), schema::schema_type::protobuf);
  EXPECT_EQ(
      schema->canonical(),
      "syntax = \"proto3\";\n\npackage shop;\n\nmessage Order {\n  string id = 1;\n  int64 total_cents = 2;\n}\n\n");
}

TEST(proto_schema_parse, layout_and_comments_do_not_change_the_canonical_text) {
  const auto a = must_parse(order_text);
  const auto b = must_parse(
      "// an order\nsyntax=\"proto3\";package shop;message Order{string id=1;/* total */int64 "
      "total_cents=2;}");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->canonical(), b->canonical());
}

TEST(proto_schema_parse, base64_descriptor_is_the_same_schema_as_its_text) {
  const auto text = must_parse(order_text);
  const auto descriptor = must_parse(base64(order_descriptor()));
  ASSERT_TRUE(text && descriptor);
  EXPECT_EQ(descriptor->canonical(), text->canonical());
  EXPECT_TRUE(descriptor->backward_incompatibilities(*text).empty());
}

TEST(proto_schema_parse, base64_without_padding_and_with_surrounding_space) {
  auto encoded = base64(order_descriptor());
  while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
  const auto schema = must_parse("\n" + encoded + "\n");
  ASSERT_TRUE(schema);
  EXPECT_NE(schema->canonical().find("message Order"), std::string::npos);
}

TEST(proto_schema_parse, explicit_json_names_are_kept) {
  auto file = order_descriptor();
  file.mutable_message_type(0)->mutable_field(0)->set_json_name("orderId");
  const auto schema = must_parse(base64(file));
  ASSERT_TRUE(schema);
  EXPECT_NE(schema->canonical().find("json_name = \"orderId\""), std::string::npos) << schema->canonical();
}

TEST(proto_schema_parse, a_descriptor_no_proto_text_can_say_is_refused) {
  auto file = order_descriptor();
  file.mutable_message_type(0)->mutable_field(0)->set_name("2id");  // libprotobuf builds it; no .proto text holds it
  EXPECT_NE(refusal(base64(file)).find("no .proto text that reads back"), std::string::npos);
}

TEST(proto_schema_parse, python_serializer_registration_with_references_by_path) {
  // What confluent-kafka's ProtobufSerializer sends: each file as base64, dependencies as references named by path,
  // well-known types left out.
  pb::FileDescriptorProto customer;
  customer.set_name("shop/customer.proto");
  customer.set_package("shop");
  customer.set_syntax("proto3");
  auto* message = customer.add_message_type();
  message->set_name("Customer");
  add_field(*message, "name", 1, pb::FieldDescriptorProto::TYPE_STRING);

  auto order = order_descriptor();
  order.add_dependency("shop/customer.proto");
  order.add_dependency("google/protobuf/timestamp.proto");
  auto* by = add_field(*order.mutable_message_type(0), "customer", 3, pb::FieldDescriptorProto::TYPE_MESSAGE);
  by->set_type_name(".shop.Customer");
  auto* at = add_field(*order.mutable_message_type(0), "at", 4, pb::FieldDescriptorProto::TYPE_MESSAGE);
  at->set_type_name(".google.protobuf.Timestamp");

  const auto schema = must_parse(base64(order), {{"shop/customer.proto", base64(customer)}});
  ASSERT_TRUE(schema);
  EXPECT_NE(schema->canonical().find("import \"shop/customer.proto\";"), std::string::npos);
  EXPECT_NE(schema->canonical().find(".shop.Customer customer = 3;"), std::string::npos) << schema->canonical();
}

TEST(proto_schema_parse, text_references_transitively_and_unused_ones_ignored) {
  const std::vector<schema::named_schema> references{
      {"common/money.proto", "syntax = \"proto3\"; package common; message Money { int64 cents = 1; }"},
      {"common/line.proto",
       "syntax = \"proto3\"; package common; import \"common/money.proto\"; message Line { Money price = 1; }"},
      {"unused.proto", "syntax = \"proto3\"; message Unused {}"}};
  const auto schema =
      must_parse("syntax = \"proto3\"; import \"common/line.proto\"; message Cart { repeated common.Line lines = 1; }",
                 references);
  ASSERT_TRUE(schema);
  EXPECT_NE(schema->canonical().find("repeated .common.Line lines = 1;"), std::string::npos);
}

TEST(proto_schema_parse, a_reference_takes_precedence_over_a_built_in_file) {
  const std::vector<schema::named_schema> references{
      {"google/type/date.proto", "syntax = \"proto3\"; package google.type; message Date { string iso = 1; }"}};
  EXPECT_TRUE(must_parse(
      "syntax = \"proto3\"; import \"google/type/date.proto\"; message M { google.type.Date d = 1; }", references));
  EXPECT_TRUE(
      must_parse("syntax = \"proto3\"; import \"google/type/date.proto\"; message M { google.type.Date d = 1; }"));
}

TEST(proto_schema_parse, well_known_files_resolve_without_references) {
  for (const auto* file : {"any", "api", "descriptor", "duration", "empty", "field_mask", "source_context", "struct",
                           "timestamp", "type", "wrappers"}) {
    EXPECT_TRUE(must_parse("syntax = \"proto3\"; import \"google/protobuf/" + std::string(file) + ".proto\";")) << file;
  }
  EXPECT_TRUE(must_parse(R"(syntax = "proto3";
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
message M { google.protobuf.Struct s = 1; google.protobuf.StringValue v = 2; google.protobuf.Any a = 3; })"));
}

TEST(proto_schema_parse, confluent_and_google_type_files_resolve_without_references) {
  for (const auto* file : {"confluent/meta.proto",           "confluent/type/decimal.proto",
                           "confluent/type/variant.proto",   "google/type/calendar_period.proto",
                           "google/type/color.proto",        "google/type/date.proto",
                           "google/type/datetime.proto",     "google/type/dayofweek.proto",
                           "google/type/decimal.proto",      "google/type/expr.proto",
                           "google/type/fraction.proto",     "google/type/interval.proto",
                           "google/type/latlng.proto",       "google/type/localized_text.proto",
                           "google/type/money.proto",        "google/type/month.proto",
                           "google/type/phone_number.proto", "google/type/postal_address.proto",
                           "google/type/quaternion.proto",   "google/type/timeofday.proto"}) {
    EXPECT_TRUE(must_parse("syntax = \"proto3\"; import \"" + std::string(file) + "\";")) << file;
  }
  const auto schema = must_parse(R"(syntax = "proto3";
package pay;
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
import "google/type/money.proto";
option (confluent.file_meta) = { doc: "payments" };
message Payment {
  option (confluent.message_meta).tags = "PII";
  confluent.type.Decimal amount = 1 [(confluent.field_meta) = { params: { key: "precision" value: "8" } }];
  google.type.Money money = 2;
})");
  ASSERT_TRUE(schema);
  EXPECT_NE(schema->canonical().find("(.confluent.file_meta)"), std::string::npos) << schema->canonical();
}

TEST(proto_schema_parse, syntax_errors_name_the_line_and_column) {
  const auto message = refusal("syntax = \"proto3\";\nmessage M {\n  int32 a = ;\n}");
  EXPECT_EQ(message.rfind("Could not parse Protobuf schema: 3:13: ", 0), 0u) << message;
}

TEST(proto_schema_parse, refusals_say_why) {
  EXPECT_NE(refusal("syntax = \"proto3\"; import \"missing.proto\";").find("\"missing.proto\", which is neither"),
            std::string::npos);
  EXPECT_NE(refusal("syntax = \"proto3\"; message M { Unknown u = 1; }").find("\"Unknown\" is not defined"),
            std::string::npos);
  EXPECT_NE(refusal("syntax = \"proto3\"; message M { int32 a = 1; int32 b = 1; }").find("M.b"), std::string::npos);
  EXPECT_NE(refusal("syntax = \"proto3\"; message M {} message M {}").find("already defined"), std::string::npos);
  EXPECT_NE(refusal("syntax = \"proto4\";").find("Could not parse"), std::string::npos);
  EXPECT_NE(refusal("not a schema").find("Could not parse"), std::string::npos);
  EXPECT_NE(refusal("QUJD").find("Could not parse"), std::string::npos);  // base64, but of no descriptor
  const auto cycle =
      refusal("syntax = \"proto3\"; import \"a.proto\";", {{"a.proto", "syntax = \"proto3\"; import \"b.proto\";"},
                                                           {"b.proto", "syntax = \"proto3\"; import \"a.proto\";"}});
  EXPECT_NE(cycle.find("in a cycle"), std::string::npos) << cycle;
  const auto bad_reference = refusal("syntax = \"proto3\";", {{"bad.proto", "message {"}});
  EXPECT_EQ(bad_reference.rfind("reference \"bad.proto\": Could not parse", 0), 0u) << bad_reference;
}

TEST(proto_schema_parse, refusals_never_echo_much_of_the_text) {
  const std::string long_name(10000, 'x');
  const auto message = refusal("syntax = \"proto3\"; message M { " + long_name + " a = 1; }");
  EXPECT_LT(message.size(), 600u) << message;
}

TEST(proto_schema_parse, message_nesting_is_bounded) {
  const schema::parse_limits limits{.max_depth = 3, .max_elements = 1000};
  EXPECT_TRUE(must_parse("message A { message B { message C {} } }", {}, limits));
  EXPECT_NE(refusal("message A { message B { message C { message D {} } } }", {}, limits).find("nested deeper than 3"),
            std::string::npos);
  auto file = order_descriptor();
  auto* nested = file.mutable_message_type(0);
  for (int i = 0; i < 3; ++i) (nested = nested->add_nested_type())->set_name("N");
  EXPECT_NE(refusal(base64(file), {}, limits).find("nested deeper than 3"), std::string::npos);
}

TEST(proto_schema_parse, deep_blocks_are_refused_before_the_parser_recurses) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "message M {";
  EXPECT_NE(refusal(text).find("nests blocks deeper than"), std::string::npos);
  std::string option = "syntax = \"proto2\"; import \"google/protobuf/descriptor.proto\"; option (x) = ";
  for (int i = 0; i < 100000; ++i) option += "{ a ";
  EXPECT_NE(refusal(option).find("nests blocks deeper than"), std::string::npos);
}

TEST(proto_schema_parse, elements_are_counted_over_the_schema_and_its_references) {
  const schema::parse_limits limits{.max_depth = 8, .max_elements = 6};
  const std::string reference = "syntax = \"proto3\"; message R { int32 a = 1; int32 b = 2; }";  // 3 elements
  EXPECT_TRUE(
      must_parse("syntax = \"proto3\"; message M { int32 a = 1; int32 b = 2; }", {{"r.proto", reference}}, limits));
  EXPECT_NE(refusal("syntax = \"proto3\"; enum E { A = 0; B = 1; C = 2; }", {{"r.proto", reference}}, limits)
                .find("more than 6"),
            std::string::npos);
}

TEST(proto_schema_parse, normalized_sorts_what_confluent_sorts) {
  const auto a = must_parse(R"(syntax = "proto3";
import "google/type/money.proto";
import "google/type/date.proto";
message M {
  int32 c = 3;
  oneof o { string b = 4; string a = 2; }
  google.type.Money m = 1;
  reserved 20, 10;
  enum E { Z = 0; Y = 2; X = 1; }
})");
  const auto b = must_parse(R"(syntax = "proto3";
import "google/type/date.proto";
import "google/type/money.proto";
message M {
  oneof o { string a = 2; string b = 4; }
  google.type.Money m = 1;
  int32 c = 3;
  reserved 10, 20;
  enum E { Z = 0; X = 1; Y = 2; }
})");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->canonical(), b->canonical());
  EXPECT_EQ(a->normalized(), b->normalized());
  EXPECT_EQ(b->normalized(), R"(syntax = "proto3";

import "google/type/date.proto";
import "google/type/money.proto";
message M {
  enum E {
    Z = 0;
    X = 1;
    Y = 2;
  }
  .google.type.Money m = 1;
  oneof o {
    string a = 2;
    string b = 4;
  }
  int32 c = 3;
  reserved 10, 20;
}

)");
}

TEST(proto_schema_parse, canonical_text_parses_again_to_itself) {
  const auto schema = must_parse(R"(syntax = "proto2";
package p;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { optional string label = 50000; }
message M {
  required int32 a = 1 [default = 7, (label) = "x"];
  optional group G = 2 { optional string s = 3; }
  map<string, M> children = 4;
  extensions 100 to 200;
}
extend M { optional int64 more = 150; }
service S { rpc Call(M) returns (M); }
enum E { A = 1; B = 2; })");
  ASSERT_TRUE(schema);
  const auto again = must_parse(schema->canonical());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->canonical(), schema->canonical());
}

TEST(proto_schema_parse, an_empty_file_is_a_schema) {
  const auto schema = must_parse("");
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->canonical(), "syntax = \"proto2\";\n\n");
}

}  // namespace
}  // namespace ferry::proto_schema
