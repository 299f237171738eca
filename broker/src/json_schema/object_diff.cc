// Confluent's rules for objects and arrays: properties and items checked against the other side's content model.
#include <algorithm>
#include <set>
#include <string>

#include "json_schema/schema_diff.h"

namespace ferry::json_schema {
namespace {

using enum difference_type;

// Open: anything may come in besides the declared properties (additionalProperties absent or true, no
// patternProperties, unevaluatedProperties absent or true).
bool is_open_object(const schema_node& schema) {
  if (!schema.permits_additional_properties || schema.additional_properties != nullptr) return false;
  if (!schema.pattern_properties.empty()) return false;
  return schema.unevaluated_properties == nullptr || schema.unevaluated_properties->accepts_anything();
}

bool is_closing(const schema_node* schema) { return schema != nullptr && schema->kind == node_kind::false_schema; }

// Partially open: the schema an undeclared property must meet, from patternProperties, additionalProperties or
// unevaluatedProperties; nullptr when the model is closed to it.
const schema_node* partial_object_schema(const schema_node& schema, const std::string& property) {
  for (const auto& [pattern, sub] : schema.pattern_properties)
    if (pattern->ok() && re2::RE2::PartialMatch(property, *pattern)) return sub;
  if (schema.additional_properties != nullptr) return schema.additional_properties;
  const schema_node* uneval = schema.unevaluated_properties;
  if (schema.permits_additional_properties && uneval != nullptr && !is_closing(uneval) && !uneval->accepts_anything())
    return uneval;
  return nullptr;
}

bool is_open_array(const schema_node& schema) {
  if (!schema.permits_additional_items || schema.additional_items != nullptr) return false;
  return schema.unevaluated_items == nullptr || schema.unevaluated_items->accepts_anything();
}

const schema_node* partial_array_schema(const schema_node& schema) {
  if (schema.additional_items != nullptr) return schema.additional_items;
  const schema_node* uneval = schema.unevaluated_items;
  if (schema.permits_additional_items && uneval != nullptr && !is_closing(uneval) && !uneval->accepts_anything())
    return uneval;
  return nullptr;
}

// The property or item is checked against the schema a partially open model gives it; its differences count
// either way, and the verdict is added after them.
void compare_covered(diff_context& ctx, const schema_node* original, const schema_node* update, difference_type covered,
                     difference_type not_covered) {
  diff_context sub = ctx.subcontext();
  compare(sub, original, update);
  ctx.add_all(sub.differences());
  ctx.add(sub.compatible() ? covered : not_covered);
}

bool has_default(const schema_node* schema) { return schema != nullptr && schema->default_value != nullptr; }

void compare_required(diff_context& ctx, const schema_node& original, const schema_node& update) {
  diff_context::path_scope scope(ctx, "required");
  for (const auto& [name, schema] : original.properties) {
    const schema_node* updated = update.property(name);
    if (updated == nullptr) continue;
    const bool was_required = original.is_required(name);
    const bool is_required = update.is_required(name);
    if (was_required && !is_required) {
      ctx.add(name, required_attribute_removed);
    } else if (!was_required && is_required) {
      ctx.add(name, has_default(updated) ? required_attribute_with_default_added : required_attribute_added);
    }
  }
}

void compare_removed_property(diff_context& ctx, const schema_node& update, const std::string& name,
                              const schema_node* schema) {
  if (is_open_object(update)) return ctx.add(property_removed_from_open_content_model);
  if (const schema_node* partial = partial_object_schema(update, name))
    return compare_covered(ctx, schema, partial, property_removed_is_covered_by_partially_open_content_model,
                           property_removed_not_covered_by_partially_open_content_model);
  ctx.add(is_closing(schema) ? property_with_false_removed_from_closed_content_model
                             : property_removed_from_closed_content_model);
}

void compare_added_property(diff_context& ctx, const schema_node& original, const schema_node& update,
                            const std::string& name, const schema_node* schema) {
  const bool required = update.is_required(name);
  if (is_open_object(original)) {
    if (schema->accepts_anything()) {
      ctx.add(property_with_empty_schema_added_to_open_content_model);
    } else if (required) {
      ctx.add(has_default(schema) ? required_property_with_default_added_to_open_content_model
                                  : required_property_added_to_open_content_model);
    } else {
      ctx.add(optional_property_added_to_open_content_model);
    }
    return;
  }
  if (const schema_node* partial = partial_object_schema(original, name))
    compare_covered(ctx, partial, schema, property_added_is_covered_by_partially_open_content_model,
                    property_added_not_covered_by_partially_open_content_model);
  if (required) {
    ctx.add(has_default(schema) ? required_property_with_default_added_to_unopen_content_model
                                : required_property_added_to_unopen_content_model);
  } else {
    ctx.add(optional_property_added_to_unopen_content_model);
  }
}

void compare_properties(diff_context& ctx, const schema_node& original, const schema_node& update) {
  diff_context::path_scope scope(ctx, "properties");
  std::set<std::string> names;
  for (const auto& entry : original.properties) names.insert(entry.first);
  for (const auto& entry : update.properties) names.insert(entry.first);
  for (const auto& name : names) {
    diff_context::path_scope property(ctx, name);
    const schema_node* before = original.property(name);
    const schema_node* after = update.property(name);
    if (after == nullptr) {
      compare_removed_property(ctx, update, name, before);
    } else if (before == nullptr) {
      compare_added_property(ctx, original, update, name, after);
    } else {
      compare(ctx, before, after);
    }
  }
}

template <typename T>
const T* find_entry(const std::vector<std::pair<std::string, T>>& entries, const std::string& name) {
  for (const auto& [key, value] : entries)
    if (key == name) return &value;
  return nullptr;
}

void compare_dependencies(diff_context& ctx, const schema_node& original, const schema_node& update) {
  diff_context::path_scope scope(ctx, "dependencies");
  std::set<std::string> names;
  for (const auto& entry : original.property_dependencies) names.insert(entry.first);
  for (const auto& entry : update.property_dependencies) names.insert(entry.first);
  for (const auto& name : names) {
    const auto* before = find_entry(original.property_dependencies, name);
    const auto* after = find_entry(update.property_dependencies, name);
    if (after == nullptr) {
      ctx.add(name, dependency_array_removed);
      continue;
    }
    if (before == nullptr) {
      ctx.add(name, dependency_array_added);
      continue;
    }
    const std::set<std::string> o(before->begin(), before->end());
    const std::set<std::string> u(after->begin(), after->end());
    if (o == u) continue;
    if (std::includes(u.begin(), u.end(), o.begin(), o.end())) {
      ctx.add(name, dependency_array_extended);
    } else if (std::includes(o.begin(), o.end(), u.begin(), u.end())) {
      ctx.add(name, dependency_array_narrowed);
    } else {
      ctx.add(name, dependency_array_changed);
    }
  }
  names.clear();
  for (const auto& entry : original.schema_dependencies) names.insert(entry.first);
  for (const auto& entry : update.schema_dependencies) names.insert(entry.first);
  for (const auto& name : names) {
    diff_context::path_scope dependency(ctx, name);
    const auto* before = find_entry(original.schema_dependencies, name);
    const auto* after = find_entry(update.schema_dependencies, name);
    if (after == nullptr) {
      ctx.add(dependency_schema_removed);
    } else if (before == nullptr) {
      ctx.add(dependency_schema_added);
    } else {
      compare(ctx, *before, *after);
    }
  }
}

void compare_additional_properties(diff_context& ctx, const schema_node& original, const schema_node& update) {
  diff_context::path_scope scope(ctx, "additionalProperties");
  if (original.permits_additional_properties != update.permits_additional_properties) {
    ctx.add(update.permits_additional_properties ? additional_properties_added : additional_properties_removed);
  } else if (original.additional_properties == nullptr && update.additional_properties != nullptr) {
    ctx.add(additional_properties_narrowed);
  } else if (original.additional_properties != nullptr && update.additional_properties == nullptr) {
    ctx.add(additional_properties_extended);
  } else {
    compare(ctx, original.additional_properties, update.additional_properties);
  }
}

// unevaluatedProperties and unevaluatedItems: absent, false, true or a schema on either side.
void compare_unevaluated(diff_context& ctx, const char* keyword, const schema_node* original, const schema_node* update,
                         difference_type added, difference_type removed, difference_type extended,
                         difference_type narrowed) {
  if (original == nullptr && update == nullptr) return;
  diff_context::path_scope scope(ctx, keyword);
  if (original == nullptr) {
    ctx.add(is_closing(update) ? removed : narrowed);
  } else if (update == nullptr) {
    ctx.add(is_closing(original) ? added : extended);
  } else if (is_closing(original) && !is_closing(update)) {
    ctx.add(added);
  } else if (!is_closing(original) && is_closing(update)) {
    ctx.add(removed);
  } else if (original->accepts_anything() && !update->accepts_anything()) {
    ctx.add(narrowed);
  } else if (!original->accepts_anything() && update->accepts_anything()) {
    ctx.add(extended);
  } else {
    compare(ctx, original, update);
  }
}

void compare_item_list(diff_context& ctx, const schema_node& original, const schema_node& update) {
  static const std::vector<const schema_node*> none;
  const auto& before = original.item_schemas ? *original.item_schemas : none;
  const auto& after = update.item_schemas ? *update.item_schemas : none;
  for (std::size_t i = 0; i < std::max(before.size(), after.size()); ++i) {
    diff_context::path_scope scope(ctx, "items/" + std::to_string(i));
    if (i < before.size() && i < after.size()) {
      compare(ctx, before[i], after[i]);
    } else if (i < before.size()) {
      if (is_open_array(update)) {
        ctx.add(item_removed_from_open_content_model);
      } else if (const schema_node* partial = partial_array_schema(update)) {
        compare_covered(ctx, before[i], partial, item_removed_is_covered_by_partially_open_content_model,
                        item_removed_not_covered_by_partially_open_content_model);
      } else {
        ctx.add(is_closing(before[i]) ? item_with_false_removed_from_closed_content_model
                                      : item_removed_from_closed_content_model);
      }
    } else if (is_open_array(original)) {
      ctx.add(after[i]->accepts_anything() ? item_with_empty_schema_added_to_open_content_model
                                           : item_added_to_open_content_model);
    } else if (const schema_node* partial = partial_array_schema(original)) {
      compare_covered(ctx, partial, after[i], item_added_is_covered_by_partially_open_content_model,
                      item_added_not_covered_by_partially_open_content_model);
    } else {
      ctx.add(item_added_to_closed_content_model);
    }
  }
}

void compare_additional_items(diff_context& ctx, const schema_node& original, const schema_node& update) {
  diff_context::path_scope scope(ctx, "additionalItems");
  if (original.permits_additional_items != update.permits_additional_items) {
    ctx.add(original.permits_additional_items ? additional_items_removed : additional_items_added);
  } else if (original.additional_items == nullptr && update.additional_items != nullptr) {
    ctx.add(additional_items_narrowed);
  } else if (original.additional_items != nullptr && update.additional_items == nullptr) {
    ctx.add(additional_items_extended);
  } else {
    compare(ctx, original.additional_items, update.additional_items);
  }
}

}  // namespace

void compare_objects(diff_context& ctx, const schema_node& original, const schema_node& update) {
  compare_required(ctx, original, update);
  compare_properties(ctx, original, update);
  compare_dependencies(ctx, original, update);
  compare_additional_properties(ctx, original, update);
  compare_unevaluated(ctx, "unevaluatedProperties", original.unevaluated_properties, update.unevaluated_properties,
                      unevaluated_properties_added, unevaluated_properties_removed, unevaluated_properties_extended,
                      unevaluated_properties_narrowed);
  compare_bound(ctx, "maxProperties", original.max_properties, update.max_properties, max_properties_added,
                max_properties_removed, max_properties_increased, max_properties_decreased);
  compare_bound(ctx, "minProperties", original.min_properties, update.min_properties, min_properties_added,
                min_properties_removed, min_properties_increased, min_properties_decreased);
}

void compare_arrays(diff_context& ctx, const schema_node& original, const schema_node& update) {
  {
    diff_context::path_scope scope(ctx, "items");
    compare(ctx, original.all_items, update.all_items);
  }
  compare_item_list(ctx, original, update);
  compare_additional_items(ctx, original, update);
  compare_unevaluated(ctx, "unevaluatedItems", original.unevaluated_items, update.unevaluated_items,
                      unevaluated_items_added, unevaluated_items_removed, unevaluated_items_extended,
                      unevaluated_items_narrowed);
  compare_bound(ctx, "maxItems", original.max_items, update.max_items, max_items_added, max_items_removed,
                max_items_increased, max_items_decreased);
  compare_bound(ctx, "minItems", original.min_items, update.min_items, min_items_added, min_items_removed,
                min_items_increased, min_items_decreased);
  if (original.unique_items != update.unique_items)
    ctx.add("uniqueItems", original.unique_items ? unique_items_removed : unique_items_added);
  compare_bound(ctx, "maxContains", original.max_contains, update.max_contains, max_contains_added,
                max_contains_removed, max_contains_increased, max_contains_decreased);
  compare_bound(ctx, "minContains", original.min_contains, update.min_contains, min_contains_added,
                min_contains_removed, min_contains_increased, min_contains_decreased);
}

}  // namespace ferry::json_schema
