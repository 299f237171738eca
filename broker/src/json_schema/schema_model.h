#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ferry::json_schema {

// Key order is kept as the client sent it: Confluent stores the schema with its keys in that order.
using json = nlohmann::ordered_json;

// The kinds of loaded schema, as the everit library Confluent's diff works on tells them apart: two schemas of
// different kinds are a TYPE_CHANGED (true and {} are different kinds, but either accepts anything).
enum class node_kind {
  empty,         // {} or a schema of annotations only
  true_schema,   // true
  false_schema,  // false
  reference,     // $ref
  combined,      // allOf / anyOf / oneOf, a type array, or several keyword families in one object
  not_schema,
  enum_schema,
  const_schema,
  string,
  number,  // "number" and "integer" (requires_integer)
  boolean,
  null,
  object,
  array,
  conditional,  // if / then / else: Confluent has no rule for it, only the common annotations are compared
};

enum class criterion { all_of, any_of, one_of };

struct schema_node;

struct pattern_property {
  std::shared_ptr<const re2::RE2> pattern;  // never matches when RE2 cannot compile the pattern
  const schema_node* schema = nullptr;
};

// One schema of a loaded document. Only the keywords Confluent's rules read are kept; values that are compared as
// JSON (enum, const, default, annotations) point into the document, which outlives the nodes. Built by the loader,
// immutable afterwards.
struct schema_node {  // NOLINT(clang-analyzer-optin.performance.Padding): fields grouped by keyword family
  node_kind kind = node_kind::empty;
  // The JSON this schema was loaded from: two subschemas of a combined schema with equal JSON count once.
  const json* source = nullptr;

  // Annotations every schema carries (Confluent: ID/TITLE/DESCRIPTION/DEFAULT_CHANGED).
  const json* id = nullptr;
  const json* title = nullptr;
  const json* description = nullptr;
  const json* default_value = nullptr;
  const json* connect_type = nullptr;  // Kafka Connect's "connect.type": two "bytes" never differ in type

  // reference
  const schema_node* referred = nullptr;

  // combined
  criterion combine = criterion::all_of;
  std::vector<const schema_node*> subschemas;

  // not
  const schema_node* must_not_match = nullptr;

  // enum, const
  std::vector<const json*> enum_values;
  const json* const_value = nullptr;

  // string
  std::optional<std::int64_t> max_length;
  std::optional<std::int64_t> min_length;
  std::optional<std::string> pattern;

  // number
  std::optional<double> maximum;
  std::optional<double> minimum;
  std::optional<double> exclusive_maximum;
  std::optional<double> exclusive_minimum;
  const json* multiple_of = nullptr;
  bool requires_integer = false;

  // object
  std::vector<std::pair<std::string, const schema_node*>> properties;
  std::vector<std::string> required;
  bool permits_additional_properties = true;
  const schema_node* additional_properties = nullptr;  // a schema (not a boolean) for additionalProperties
  std::vector<pattern_property> pattern_properties;
  std::vector<std::pair<std::string, std::vector<std::string>>> property_dependencies;
  std::vector<std::pair<std::string, const schema_node*>> schema_dependencies;
  std::optional<std::int64_t> max_properties;
  std::optional<std::int64_t> min_properties;
  const schema_node* unevaluated_properties = nullptr;

  // array
  const schema_node* all_items = nullptr;                       // items as one schema
  std::optional<std::vector<const schema_node*>> item_schemas;  // items as an array (tuple validation)
  bool permits_additional_items = true;
  const schema_node* additional_items = nullptr;
  std::optional<std::int64_t> max_items;
  std::optional<std::int64_t> min_items;
  bool unique_items = false;
  std::optional<double> max_contains;
  std::optional<double> min_contains;
  const schema_node* unevaluated_items = nullptr;

  [[nodiscard]] bool accepts_anything() const { return kind == node_kind::empty || kind == node_kind::true_schema; }
  [[nodiscard]] const schema_node* property(const std::string& name) const {
    for (const auto& [key, schema] : properties)
      if (key == name) return schema;
    return nullptr;
  }
  [[nodiscard]] bool is_required(const std::string& name) const {
    for (const auto& key : required)
      if (key == name) return true;
    return false;
  }
};

}  // namespace ferry::json_schema
