#include "proto_schema/difference.h"

namespace ferry::proto_schema {

std::string_view type_name(difference_type type) {
  switch (type) {
    case difference_type::package_changed:
      return "PACKAGE_CHANGED";
    case difference_type::message_removed:
      return "MESSAGE_REMOVED";
    case difference_type::field_kind_changed:
      return "FIELD_KIND_CHANGED";
    case difference_type::field_scalar_kind_changed:
      return "FIELD_SCALAR_KIND_CHANGED";
    case difference_type::field_named_type_changed:
      return "FIELD_NAMED_TYPE_CHANGED";
    case difference_type::field_numeric_label_changed:
      return "FIELD_NUMERIC_LABEL_CHANGED";
    case difference_type::required_field_added:
      return "REQUIRED_FIELD_ADDED";
    case difference_type::required_field_removed:
      return "REQUIRED_FIELD_REMOVED";
    case difference_type::oneof_field_removed:
      return "ONEOF_FIELD_REMOVED";
    case difference_type::multiple_fields_moved_to_oneof:
      return "MULTIPLE_FIELDS_MOVED_TO_ONEOF";
    case difference_type::field_moved_to_existing_oneof:
      return "FIELD_MOVED_TO_EXISTING_ONEOF";
  }
  return "PACKAGE_CHANGED";
}

std::string to_message(const difference& diff) {
  const std::string at = "'" + diff.path + "'";
  std::string description;
  switch (diff.type) {
    case difference_type::package_changed:
      description = "The package at " + at + " in the new schema does not match the package in the old schema";
      break;
    case difference_type::message_removed:
      description = "The new schema is missing a MESSAGE type at path " + at + " in the old schema";
      break;
    case difference_type::field_kind_changed:
      description = "The type of a field at path " + at + " in the new schema does not match the old schema";
      break;
    case difference_type::field_scalar_kind_changed:
      description =
          "The kind of a SCALAR field at path " + at + " in the new schema does not match its kind in the old schema";
      break;
    case difference_type::field_named_type_changed:
      description =
          "The type of a MESSAGE field at path " + at + " in the new schema does not match its type in the old schema";
      break;
    case difference_type::field_numeric_label_changed:
      description = "The label for a NUMERIC field at path " + at +
                    " in the new schema does not match its label in the old schema";
      break;
    case difference_type::required_field_added:
      description = "A required field  at path " + at + " in the new schema is missing in the old schema";
      break;
    case difference_type::required_field_removed:
      description = "The new schema is missing a required field at path: " + at + " in the old schema";
      break;
    case difference_type::oneof_field_removed:
      description = "The new schema is missing a oneof field at path " + at + " in the old schema";
      break;
    case difference_type::multiple_fields_moved_to_oneof:
      description =
          "Multiple fields in the oneof at path " + at + " in the new schema are outside a oneof in the old schema";
      break;
    case difference_type::field_moved_to_existing_oneof:
      description =
          "A field in the oneof at path " + at + " in the new schema is outside an existing oneof in the old schema";
      break;
  }
  return "{errorType:\"" + std::string(type_name(diff.type)) + "\", description:\"" + description + "\"}";
}

}  // namespace ferry::proto_schema
