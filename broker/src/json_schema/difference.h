#pragma once

#include <string>
#include <string_view>

namespace ferry::json_schema {

// Confluent's difference types (json-schema-provider's Difference.Type), with whether each is in its STRICT set
// of compatible changes (SchemaDiff.COMPATIBLE_CHANGES_STRICT, the one `isBackwardCompatible` uses). The last two
// are Ferry's: a comparison that would exhaust the stack or run for too long is refused rather than trusted.
#define FERRY_JSON_SCHEMA_DIFFERENCES(X)                                                                              \
  X(id_changed, "ID_CHANGED", true)                                                                                   \
  X(description_changed, "DESCRIPTION_CHANGED", true)                                                                 \
  X(title_changed, "TITLE_CHANGED", true)                                                                             \
  X(default_changed, "DEFAULT_CHANGED", true)                                                                         \
  X(schema_added, "SCHEMA_ADDED", false)                                                                              \
  X(schema_removed, "SCHEMA_REMOVED", true)                                                                           \
  X(type_extended, "TYPE_EXTENDED", true)                                                                             \
  X(type_narrowed, "TYPE_NARROWED", false)                                                                            \
  X(type_changed, "TYPE_CHANGED", false)                                                                              \
  X(max_length_added, "MAX_LENGTH_ADDED", false)                                                                      \
  X(max_length_removed, "MAX_LENGTH_REMOVED", true)                                                                   \
  X(max_length_increased, "MAX_LENGTH_INCREASED", true)                                                               \
  X(max_length_decreased, "MAX_LENGTH_DECREASED", false)                                                              \
  X(min_length_added, "MIN_LENGTH_ADDED", false)                                                                      \
  X(min_length_removed, "MIN_LENGTH_REMOVED", true)                                                                   \
  X(min_length_increased, "MIN_LENGTH_INCREASED", false)                                                              \
  X(min_length_decreased, "MIN_LENGTH_DECREASED", true)                                                               \
  X(pattern_added, "PATTERN_ADDED", false)                                                                            \
  X(pattern_removed, "PATTERN_REMOVED", true)                                                                         \
  X(pattern_changed, "PATTERN_CHANGED", false)                                                                        \
  X(maximum_added, "MAXIMUM_ADDED", false)                                                                            \
  X(maximum_removed, "MAXIMUM_REMOVED", true)                                                                         \
  X(maximum_increased, "MAXIMUM_INCREASED", true)                                                                     \
  X(maximum_decreased, "MAXIMUM_DECREASED", false)                                                                    \
  X(minimum_added, "MINIMUM_ADDED", false)                                                                            \
  X(minimum_removed, "MINIMUM_REMOVED", true)                                                                         \
  X(minimum_increased, "MINIMUM_INCREASED", false)                                                                    \
  X(minimum_decreased, "MINIMUM_DECREASED", true)                                                                     \
  X(exclusive_maximum_added, "EXCLUSIVE_MAXIMUM_ADDED", false)                                                        \
  X(exclusive_maximum_removed, "EXCLUSIVE_MAXIMUM_REMOVED", true)                                                     \
  X(exclusive_maximum_increased, "EXCLUSIVE_MAXIMUM_INCREASED", true)                                                 \
  X(exclusive_maximum_decreased, "EXCLUSIVE_MAXIMUM_DECREASED", false)                                                \
  X(exclusive_minimum_added, "EXCLUSIVE_MINIMUM_ADDED", false)                                                        \
  X(exclusive_minimum_removed, "EXCLUSIVE_MINIMUM_REMOVED", true)                                                     \
  X(exclusive_minimum_increased, "EXCLUSIVE_MINIMUM_INCREASED", false)                                                \
  X(exclusive_minimum_decreased, "EXCLUSIVE_MINIMUM_DECREASED", true)                                                 \
  X(multiple_of_added, "MULTIPLE_OF_ADDED", false)                                                                    \
  X(multiple_of_removed, "MULTIPLE_OF_REMOVED", true)                                                                 \
  X(multiple_of_expanded, "MULTIPLE_OF_EXPANDED", false)                                                              \
  X(multiple_of_reduced, "MULTIPLE_OF_REDUCED", true)                                                                 \
  X(multiple_of_changed, "MULTIPLE_OF_CHANGED", false)                                                                \
  X(required_attribute_added, "REQUIRED_ATTRIBUTE_ADDED", false)                                                      \
  X(required_attribute_with_default_added, "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", true)                             \
  X(required_attribute_removed, "REQUIRED_ATTRIBUTE_REMOVED", true)                                                   \
  X(max_properties_added, "MAX_PROPERTIES_ADDED", false)                                                              \
  X(max_properties_removed, "MAX_PROPERTIES_REMOVED", true)                                                           \
  X(max_properties_increased, "MAX_PROPERTIES_INCREASED", true)                                                       \
  X(max_properties_decreased, "MAX_PROPERTIES_DECREASED", false)                                                      \
  X(min_properties_added, "MIN_PROPERTIES_ADDED", false)                                                              \
  X(min_properties_removed, "MIN_PROPERTIES_REMOVED", true)                                                           \
  X(min_properties_increased, "MIN_PROPERTIES_INCREASED", false)                                                      \
  X(min_properties_decreased, "MIN_PROPERTIES_DECREASED", true)                                                       \
  X(additional_properties_added, "ADDITIONAL_PROPERTIES_ADDED", true)                                                 \
  X(additional_properties_removed, "ADDITIONAL_PROPERTIES_REMOVED", false)                                            \
  X(additional_properties_extended, "ADDITIONAL_PROPERTIES_EXTENDED", true)                                           \
  X(additional_properties_narrowed, "ADDITIONAL_PROPERTIES_NARROWED", false)                                          \
  X(dependency_array_added, "DEPENDENCY_ARRAY_ADDED", false)                                                          \
  X(dependency_array_removed, "DEPENDENCY_ARRAY_REMOVED", true)                                                       \
  X(dependency_array_extended, "DEPENDENCY_ARRAY_EXTENDED", false)                                                    \
  X(dependency_array_narrowed, "DEPENDENCY_ARRAY_NARROWED", true)                                                     \
  X(dependency_array_changed, "DEPENDENCY_ARRAY_CHANGED", false)                                                      \
  X(dependency_schema_added, "DEPENDENCY_SCHEMA_ADDED", false)                                                        \
  X(dependency_schema_removed, "DEPENDENCY_SCHEMA_REMOVED", true)                                                     \
  X(required_property_added_to_open_content_model, "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", false)            \
  X(required_property_with_default_added_to_open_content_model,                                                       \
    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL", false)                                              \
  X(optional_property_added_to_open_content_model, "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", false)            \
  X(property_with_empty_schema_added_to_open_content_model, "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", \
    true)                                                                                                             \
  X(required_property_added_to_unopen_content_model, "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", false)        \
  X(required_property_with_default_added_to_unopen_content_model,                                                     \
    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL", true)                                             \
  X(optional_property_added_to_unopen_content_model, "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", true)         \
  X(property_removed_from_open_content_model, "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", true)                       \
  X(property_with_false_removed_from_closed_content_model, "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",   \
    true)                                                                                                             \
  X(property_removed_from_closed_content_model, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", false)                  \
  X(property_removed_is_covered_by_partially_open_content_model,                                                      \
    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", true)                                              \
  X(property_removed_not_covered_by_partially_open_content_model,                                                     \
    "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", false)                                            \
  X(property_added_is_covered_by_partially_open_content_model,                                                        \
    "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", true)                                                \
  X(property_added_not_covered_by_partially_open_content_model,                                                       \
    "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", false)                                              \
  X(reserved_property_removed, "RESERVED_PROPERTY_REMOVED", false)                                                    \
  X(reserved_property_conflicts_with_property, "RESERVED_PROPERTY_CONFLICTS_WITH_PROPERTY", false)                    \
  X(unevaluated_properties_added, "UNEVALUATED_PROPERTIES_ADDED", true)                                               \
  X(unevaluated_properties_removed, "UNEVALUATED_PROPERTIES_REMOVED", false)                                          \
  X(unevaluated_properties_extended, "UNEVALUATED_PROPERTIES_EXTENDED", true)                                         \
  X(unevaluated_properties_narrowed, "UNEVALUATED_PROPERTIES_NARROWED", false)                                        \
  X(max_items_added, "MAX_ITEMS_ADDED", false)                                                                        \
  X(max_items_removed, "MAX_ITEMS_REMOVED", true)                                                                     \
  X(max_items_increased, "MAX_ITEMS_INCREASED", true)                                                                 \
  X(max_items_decreased, "MAX_ITEMS_DECREASED", false)                                                                \
  X(min_items_added, "MIN_ITEMS_ADDED", false)                                                                        \
  X(min_items_removed, "MIN_ITEMS_REMOVED", true)                                                                     \
  X(min_items_increased, "MIN_ITEMS_INCREASED", false)                                                                \
  X(min_items_decreased, "MIN_ITEMS_DECREASED", true)                                                                 \
  X(max_contains_added, "MAX_CONTAINS_ADDED", false)                                                                  \
  X(max_contains_removed, "MAX_CONTAINS_REMOVED", true)                                                               \
  X(max_contains_increased, "MAX_CONTAINS_INCREASED", true)                                                           \
  X(max_contains_decreased, "MAX_CONTAINS_DECREASED", false)                                                          \
  X(min_contains_added, "MIN_CONTAINS_ADDED", false)                                                                  \
  X(min_contains_removed, "MIN_CONTAINS_REMOVED", true)                                                               \
  X(min_contains_increased, "MIN_CONTAINS_INCREASED", false)                                                          \
  X(min_contains_decreased, "MIN_CONTAINS_DECREASED", true)                                                           \
  X(unique_items_added, "UNIQUE_ITEMS_ADDED", false)                                                                  \
  X(unique_items_removed, "UNIQUE_ITEMS_REMOVED", true)                                                               \
  X(additional_items_added, "ADDITIONAL_ITEMS_ADDED", true)                                                           \
  X(additional_items_removed, "ADDITIONAL_ITEMS_REMOVED", false)                                                      \
  X(additional_items_extended, "ADDITIONAL_ITEMS_EXTENDED", true)                                                     \
  X(additional_items_narrowed, "ADDITIONAL_ITEMS_NARROWED", false)                                                    \
  X(unevaluated_items_added, "UNEVALUATED_ITEMS_ADDED", true)                                                         \
  X(unevaluated_items_removed, "UNEVALUATED_ITEMS_REMOVED", false)                                                    \
  X(unevaluated_items_extended, "UNEVALUATED_ITEMS_EXTENDED", true)                                                   \
  X(unevaluated_items_narrowed, "UNEVALUATED_ITEMS_NARROWED", false)                                                  \
  X(item_added_to_open_content_model, "ITEM_ADDED_TO_OPEN_CONTENT_MODEL", false)                                      \
  X(item_with_empty_schema_added_to_open_content_model, "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", true)   \
  X(item_added_to_closed_content_model, "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", true)                                   \
  X(item_removed_from_open_content_model, "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL", true)                               \
  X(item_with_false_removed_from_closed_content_model, "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", true)     \
  X(item_removed_from_closed_content_model, "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", false)                          \
  X(item_removed_is_covered_by_partially_open_content_model,                                                          \
    "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", true)                                                  \
  X(item_removed_not_covered_by_partially_open_content_model,                                                         \
    "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", false)                                                \
  X(item_added_is_covered_by_partially_open_content_model, "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",   \
    true)                                                                                                             \
  X(item_added_not_covered_by_partially_open_content_model, "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", \
    false)                                                                                                            \
  X(enum_array_extended, "ENUM_ARRAY_EXTENDED", true)                                                                 \
  X(enum_array_narrowed, "ENUM_ARRAY_NARROWED", false)                                                                \
  X(enum_array_changed, "ENUM_ARRAY_CHANGED", false)                                                                  \
  X(combined_type_extended, "COMBINED_TYPE_EXTENDED", true)                                                           \
  X(combined_type_changed, "COMBINED_TYPE_CHANGED", false)                                                            \
  X(product_type_extended, "PRODUCT_TYPE_EXTENDED", false)                                                            \
  X(product_type_narrowed, "PRODUCT_TYPE_NARROWED", true)                                                             \
  X(sum_type_extended, "SUM_TYPE_EXTENDED", true)                                                                     \
  X(sum_type_narrowed, "SUM_TYPE_NARROWED", false)                                                                    \
  X(combined_type_subschemas_changed, "COMBINED_TYPE_SUBSCHEMAS_CHANGED", false)                                      \
  X(not_type_extended, "NOT_TYPE_EXTENDED", false)                                                                    \
  X(not_type_narrowed, "NOT_TYPE_NARROWED", true)                                                                     \
  X(schema_too_deep_to_compare, "SCHEMA_TOO_DEEP_TO_COMPARE", false)                                                  \
  X(schema_too_complex_to_compare, "SCHEMA_TOO_COMPLEX_TO_COMPARE", false)

enum class difference_type {
#define FERRY_JSON_SCHEMA_DIFFERENCE_ENUM(id, name, compatible) id,
  FERRY_JSON_SCHEMA_DIFFERENCES(FERRY_JSON_SCHEMA_DIFFERENCE_ENUM)
#undef FERRY_JSON_SCHEMA_DIFFERENCE_ENUM
};

// Confluent's name of the type, e.g. "TYPE_CHANGED".
std::string_view type_name(difference_type type);
bool is_compatible(difference_type type);

// One difference found from the old schema to the new, at a JSON path of the old one ("#/properties/age").
struct difference {
  difference_type type;
  std::string path;

  bool operator==(const difference&) const = default;
};

}  // namespace ferry::json_schema
