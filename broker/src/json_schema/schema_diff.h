#pragma once

#include <optional>
#include <vector>

#include "json_schema/diff_context.h"
#include "json_schema/difference.h"
#include "json_schema/schema_model.h"

namespace ferry::json_schema {

// Confluent's `SchemaDiff.compare(original, update)`: every difference from the old schema to the new, compatible
// or not. `$ref`s are followed; recursion through them ends at a pair already being compared.
std::vector<difference> compare_schemas(const schema_node* original, const schema_node* update);

// The recursion hub every rule comes back through (either side may be absent: SCHEMA_ADDED / SCHEMA_REMOVED).
void compare(diff_context& ctx, const schema_node* original, const schema_node* update);

template <typename T>
// A bound (maxLength, minimum, maxItems...): added, removed, raised or lowered.
void compare_bound(diff_context& ctx, const char* attribute, const std::optional<T>& original,
                   const std::optional<T>& update, difference_type added, difference_type removed,
                   difference_type increased, difference_type decreased) {
  if (original == update) return;
  if (!original) {
    ctx.add(attribute, added);
  } else if (!update) {
    ctx.add(attribute, removed);
  } else if (*original < *update) {
    ctx.add(attribute, increased);
  } else if (*original > *update) {
    ctx.add(attribute, decreased);
  }
}

// The rules for objects and arrays (object_diff.cc), both nodes of that kind.
void compare_objects(diff_context& ctx, const schema_node& original, const schema_node& update);
void compare_arrays(diff_context& ctx, const schema_node& original, const schema_node& update);

}  // namespace ferry::json_schema
