#include "schema/schema_format.h"

namespace ferry::schema {

std::string_view type_name(schema_type type) {
  switch (type) {
    case schema_type::avro:
      return "AVRO";
    case schema_type::json:
      return "JSON";
    case schema_type::protobuf:
      return "PROTOBUF";
  }
  return "AVRO";
}

std::optional<schema_type> parse_type(std::string_view name) {
  if (name == "AVRO") return schema_type::avro;
  if (name == "JSON") return schema_type::json;
  if (name == "PROTOBUF") return schema_type::protobuf;
  return std::nullopt;
}

}  // namespace ferry::schema
