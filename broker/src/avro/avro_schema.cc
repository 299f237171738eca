#include "avro/avro_schema.h"

namespace ferry::avro {

std::string_view java_type_name(kind k) {
  switch (k) {
    case kind::null:
      return "NULL";
    case kind::boolean:
      return "BOOLEAN";
    case kind::int_:
      return "INT";
    case kind::long_:
      return "LONG";
    case kind::float_:
      return "FLOAT";
    case kind::double_:
      return "DOUBLE";
    case kind::bytes:
      return "BYTES";
    case kind::string:
      return "STRING";
    case kind::record:
      return "RECORD";
    case kind::enum_:
      return "ENUM";
    case kind::array:
      return "ARRAY";
    case kind::map:
      return "MAP";
    case kind::union_:
      return "UNION";
    case kind::fixed:
      return "FIXED";
  }
  return "NULL";
}

std::string_view avro_type_name(kind k) {
  switch (k) {
    case kind::null:
      return "null";
    case kind::boolean:
      return "boolean";
    case kind::int_:
      return "int";
    case kind::long_:
      return "long";
    case kind::float_:
      return "float";
    case kind::double_:
      return "double";
    case kind::bytes:
      return "bytes";
    case kind::string:
      return "string";
    case kind::record:
      return "record";
    case kind::enum_:
      return "enum";
    case kind::array:
      return "array";
    case kind::map:
      return "map";
    case kind::union_:
      return "union";
    case kind::fixed:
      return "fixed";
  }
  return "null";
}

std::string node::full_name() const { return is_named() ? name.full() : std::string(avro_type_name(type)); }

std::vector<std::string> node::alias_full_names() const {
  std::vector<std::string> result;
  for (const auto& alias : aliases) {
    result.push_back(alias.space.empty() && !name.space.empty() ? "." + alias.name : alias.full());
  }
  return result;
}

std::string avro_schema::canonical() const { return to_canonical_json(*root_, reference_names_, false); }

std::string avro_schema::normalized() const { return to_canonical_json(*root_, reference_names_, true); }

std::vector<std::string> avro_schema::backward_incompatibilities(const schema::parsed_schema& previous) const {
  const auto* writer = dynamic_cast<const avro_schema*>(&previous);
  if (writer == nullptr) return {"Incompatible because of different schema type"};
  return reader_writer_incompatibilities(*root_, writer->root());
}

}  // namespace ferry::avro
