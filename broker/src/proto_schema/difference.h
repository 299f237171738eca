#pragma once

#include <string>
#include <string_view>

namespace ferry::proto_schema {

// The differences of Confluent's protobuf-provider (`diff/Difference.java`) that break BACKWARD compatibility. The
// compatible ones (message or field added, renamed, moved; enums; oneofs added or removed...) are never recorded,
// since only these reach a client.
enum class difference_type {
  package_changed,
  message_removed,
  field_kind_changed,
  field_scalar_kind_changed,
  field_named_type_changed,
  field_numeric_label_changed,
  required_field_added,
  required_field_removed,
  oneof_field_removed,
  multiple_fields_moved_to_oneof,
  field_moved_to_existing_oneof,
};

// One difference at a path in Confluent's form: "#/" then message names, a oneof's name, a field's tag
// ("#/Order/3", "#/Order/payment/5").
struct difference {
  difference_type type;
  std::string path;

  bool operator==(const difference&) const = default;
};

std::string_view type_name(difference_type type);

// The message Confluent's registry returns for a difference when it checks a new schema against an old one:
// `{errorType:"FIELD_KIND_CHANGED", description:"The type of a field at path '#/Order/3' in the new schema does not
// match the old schema"}`. Confluent fills "new" and "old" in by the direction of the check; here the schema the check
// runs on is always "new" (see proto_schema.h).
std::string to_message(const difference& diff);

}  // namespace ferry::proto_schema
