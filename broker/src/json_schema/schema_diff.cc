#include "json_schema/schema_diff.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "json_schema/schema_loader.h"

namespace ferry::json_schema {
namespace {

using enum difference_type;

// Nested comparisons deeper than this are refused rather than risk the stack (Confluent has no bound).
constexpr std::size_t max_compare_depth = 256;
// Pairs compared (not found in the memo) over all passes before a comparison is given up as too costly (Confluent
// relies on a timeout).
constexpr std::size_t max_compare_work = 200000;
// Fixpoint passes over recursive schemas; each adds pairs to the seed, so few are ever needed.
constexpr int max_passes = 32;

bool same_json(const json* a, const json* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

// A JSON number as an exact decimal, digits × 10^exponent, as Java's BigDecimal compares multipleOf.
struct decimal {
  unsigned __int128 digits = 0;
  int exponent = 0;
};

std::optional<decimal> to_decimal(const json& number) {
  if (number.is_number_unsigned()) return decimal{number.get<std::uint64_t>(), 0};
  if (number.is_number_integer()) {
    const auto v = number.get<std::int64_t>();
    return decimal{v < 0 ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v), 0};
  }
  // nlohmann writes a double in its shortest round-trip form, which is the decimal the client wrote in all but
  // contrived cases.
  const std::string text = number.dump();
  decimal out;
  std::size_t digits = 0;
  std::size_t i = text[0] == '-' ? 1 : 0;
  bool fraction = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      fraction = true;
      continue;
    }
    if (++digits > 30) return std::nullopt;
    out.digits = out.digits * 10 + static_cast<unsigned>(text[i] - '0');
    if (fraction) --out.exponent;
  }
  if (i < text.size()) {
    const char* first = text.data() + i + 1;
    if (*first == '+') ++first;
    int exponent = 0;
    std::from_chars(first, text.data() + text.size(), exponent);
    out.exponent += exponent;
  }
  while (out.digits != 0 && out.digits % 10 == 0) {
    out.digits /= 10;
    ++out.exponent;
  }
  return out;
}

// Whether a is a whole multiple of b (b not zero); nullopt when the exact arithmetic would overflow.
std::optional<bool> is_multiple(const decimal& a, const decimal& b) {
  if (b.digits == 0) return std::nullopt;
  if (a.digits == 0) return true;
  auto x = a.digits;
  auto y = b.digits;
  for (int e = a.exponent; e > b.exponent; --e) {
    if (x > static_cast<unsigned __int128>(UINT64_MAX) * UINT64_MAX / 10) return std::nullopt;
    x *= 10;
  }
  for (int e = b.exponent; e > a.exponent; --e) {
    if (y > static_cast<unsigned __int128>(UINT64_MAX) * UINT64_MAX / 10) return std::nullopt;
    y *= 10;
  }
  return x % y == 0;
}

void compare_strings(diff_context& ctx, const schema_node& original, const schema_node& update) {
  compare_bound(ctx, "maxLength", original.max_length, update.max_length, max_length_added, max_length_removed,
                max_length_increased, max_length_decreased);
  compare_bound(ctx, "minLength", original.min_length, update.min_length, min_length_added, min_length_removed,
                min_length_increased, min_length_decreased);
  if (!original.pattern && update.pattern) {
    ctx.add("pattern", pattern_added);
  } else if (original.pattern && !update.pattern) {
    ctx.add("pattern", pattern_removed);
  } else if (original.pattern && *original.pattern != *update.pattern) {
    ctx.add("pattern", pattern_changed);
  }
}

void compare_multiple_of(diff_context& ctx, const json* original, const json* update) {
  if (original == nullptr && update == nullptr) return;
  if (original == nullptr) return ctx.add("multipleOf", multiple_of_added);
  if (update == nullptr) return ctx.add("multipleOf", multiple_of_removed);
  const auto o = to_decimal(*original);
  const auto u = to_decimal(*update);
  if (o && u && o->digits == u->digits && o->exponent == u->exponent) return;
  if (o && u && is_multiple(*u, *o).value_or(false)) {
    ctx.add("multipleOf", multiple_of_expanded);
  } else if (o && u && is_multiple(*o, *u).value_or(false)) {
    ctx.add("multipleOf", multiple_of_reduced);
  } else {
    ctx.add("multipleOf", multiple_of_changed);
  }
}

void compare_numbers(diff_context& ctx, const schema_node& original, const schema_node& update) {
  compare_bound(ctx, "maximum", original.maximum, update.maximum, maximum_added, maximum_removed, maximum_increased,
                maximum_decreased);
  compare_bound(ctx, "minimum", original.minimum, update.minimum, minimum_added, minimum_removed, minimum_increased,
                minimum_decreased);
  compare_bound(ctx, "exclusiveMaximum", original.exclusive_maximum, update.exclusive_maximum, exclusive_maximum_added,
                exclusive_maximum_removed, exclusive_maximum_increased, exclusive_maximum_decreased);
  compare_bound(ctx, "exclusiveMinimum", original.exclusive_minimum, update.exclusive_minimum, exclusive_minimum_added,
                exclusive_minimum_removed, exclusive_minimum_increased, exclusive_minimum_decreased);
  compare_multiple_of(ctx, original.multiple_of, update.multiple_of);
  if (original.requires_integer != update.requires_integer)
    ctx.add(original.requires_integer ? type_extended : type_narrowed);
}

std::set<std::string> value_set(const std::vector<const json*>& values) {
  std::set<std::string> out;
  for (const json* v : values) out.insert(v->dump());
  return out;
}

bool contains_all(const std::set<std::string>& all, const std::set<std::string>& some) {
  for (const auto& v : some)
    if (all.count(v) == 0) return false;
  return true;
}

void compare_enums(diff_context& ctx, const schema_node& original, const schema_node& update) {
  const auto o = value_set(original.enum_values);
  const auto u = value_set(update.enum_values);
  if (o == u) return;
  if (contains_all(u, o)) {
    ctx.add("enum", enum_array_extended);
  } else if (contains_all(o, u)) {
    ctx.add("enum", enum_array_narrowed);
  } else {
    ctx.add("enum", enum_array_changed);
  }
}

void compare_not(diff_context& ctx, const schema_node& original, const schema_node& update) {
  diff_context::path_scope scope(ctx, "not");
  diff_context sub = ctx.subcontext();
  // What the old schema excluded, the new one must still exclude: compared the other way round.
  compare(sub, update.must_not_match, original.must_not_match);
  ctx.add(sub.compatible() ? not_type_narrowed : not_type_extended);
}

const char* criterion_name(criterion c) {
  switch (c) {
    case criterion::all_of:
      return "allOf";
    case criterion::any_of:
      return "anyOf";
    case criterion::one_of:
      return "oneOf";
  }
  return "allOf";
}

bool is_sum(criterion c) { return c == criterion::any_of || c == criterion::one_of; }

// Subschemas with equal JSON count once, as Confluent collects them in a set.
std::vector<const schema_node*> distinct(const std::vector<const schema_node*>& subschemas) {
  std::vector<const schema_node*> out;
  std::set<std::string> seen;
  for (const schema_node* sub : subschemas) {
    std::string key = std::to_string(static_cast<int>(sub->kind)) + ":" + sub->source->dump();
    if (seen.insert(std::move(key)).second) out.push_back(sub);
  }
  return out;
}

// Kuhn's augmenting paths: a maximum matching of old subschemas to new ones they are compatible with.
bool augment(std::size_t left, const std::vector<std::vector<std::size_t>>& edges, std::vector<bool>& visited,
             std::vector<std::optional<std::size_t>>& match_of_right) {
  for (std::size_t right : edges[left]) {
    if (visited[right]) continue;
    visited[right] = true;
    if (!match_of_right[right] || augment(*match_of_right[right], edges, visited, match_of_right)) {
      match_of_right[right] = left;
      return true;
    }
  }
  return false;
}

void compare_combined(diff_context& ctx, const schema_node& original, const schema_node& update) {
  if (original.combine != update.combine) {
    const bool singleton_original = original.subschemas.size() == 1;
    const bool singleton_update = update.subschemas.size() == 1;
    if (update.combine == criterion::any_of || (singleton_original && singleton_update) ||
        (singleton_original && update.combine == criterion::one_of) ||
        (singleton_update && original.combine == criterion::all_of)) {
      ctx.add(combined_type_extended);
    } else {
      return ctx.add(combined_type_changed);
    }
  }
  const auto originals = distinct(original.subschemas);
  const auto updates = distinct(update.subschemas);
  if (originals.size() < updates.size()) {
    ctx.add(update.combine == criterion::all_of ? product_type_extended : sum_type_extended);
  } else if (originals.size() > updates.size()) {
    ctx.add(is_sum(original.combine) ? sum_type_narrowed : product_type_narrowed);
  }
  std::vector<std::vector<std::size_t>> edges(originals.size());
  std::map<std::pair<std::size_t, std::size_t>, std::vector<difference>> edge_differences;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    diff_context::path_scope scope(ctx, std::string(criterion_name(original.combine)) + "/" + std::to_string(i));
    for (std::size_t j = 0; j < updates.size(); ++j) {
      if (*ctx.shared().work > max_compare_work) return ctx.add(schema_too_complex_to_compare);
      diff_context sub = ctx.subcontext();
      compare(sub, originals[i], updates[j]);
      if (!sub.compatible()) continue;
      edges[i].push_back(j);
      edge_differences.emplace(std::pair{i, j}, sub.differences());
    }
  }
  std::vector<std::optional<std::size_t>> match_of_right(updates.size());
  std::size_t matched = 0;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    std::vector<bool> visited(updates.size());
    if (augment(i, edges, visited, match_of_right)) ++matched;
  }
  for (std::size_t j = 0; j < updates.size(); ++j)
    if (match_of_right[j]) ctx.add_all(edge_differences[{*match_of_right[j], j}]);
  if (matched < std::min(originals.size(), updates.size())) ctx.add(combined_type_subschemas_changed);
}

// A schema against a combined one on the other side: a new sum type accepting the old schema in one branch, or
// an old product type of which one part is compatible with the new schema (and singletons either way).
bool compare_with_combined(diff_context& ctx, const schema_node& original, const schema_node& update) {
  const bool original_combined = original.kind == node_kind::combined;
  const bool update_combined = update.kind == node_kind::combined;
  if (original_combined == update_combined) return false;
  const schema_node& combined = update_combined ? update : original;
  const bool singleton = combined.subschemas.size() == 1;
  if (!singleton && (update_combined ? !is_sum(combined.combine) : combined.combine != criterion::all_of)) return false;
  for (const schema_node* sub : combined.subschemas) {
    diff_context attempt = ctx.subcontext();
    compare(attempt, update_combined ? &original : sub, update_combined ? sub : &update);
    if (attempt.compatible()) {
      ctx.add_all(attempt.differences());
      if (!singleton) ctx.add(update_combined ? sum_type_extended : product_type_narrowed);
      return true;
    }
    if (singleton) break;
  }
  return false;
}

bool is_bytes(const schema_node& node) {
  return node.connect_type != nullptr && node.connect_type->is_string() &&
         node.connect_type->get<std::string>() == "bytes";
}

void compare_types(diff_context& ctx, const schema_node& original, const schema_node& update) {
  if (compare_with_combined(ctx, original, update)) return;
  if (original.kind != update.kind) {
    // Nothing the old schema accepted is refused by a schema that accepts anything; false accepted nothing.
    if (original.kind == node_kind::false_schema || update.accepts_anything()) return;
    if (is_bytes(original) && is_bytes(update)) return;
    return ctx.add(type_changed);
  }
  if (!same_json(original.id, update.id)) ctx.add(id_changed);
  if (!same_json(original.title, update.title)) ctx.add(title_changed);
  if (!same_json(original.description, update.description)) ctx.add(description_changed);
  if (!same_json(original.default_value, update.default_value)) ctx.add(default_changed);
  switch (original.kind) {
    case node_kind::string:
      return compare_strings(ctx, original, update);
    case node_kind::number:
      return compare_numbers(ctx, original, update);
    case node_kind::const_schema:
      if (original.const_value->dump() != update.const_value->dump()) ctx.add("const", enum_array_changed);
      return;
    case node_kind::enum_schema:
      return compare_enums(ctx, original, update);
    case node_kind::combined:
      return compare_combined(ctx, original, update);
    case node_kind::not_schema:
      return compare_not(ctx, original, update);
    case node_kind::object:
      return compare_objects(ctx, original, update);
    case node_kind::array:
      return compare_arrays(ctx, original, update);
    default:
      return;
  }
}

}  // namespace

void compare(diff_context& ctx, const schema_node* original, const schema_node* update) {
  if (original == nullptr && update == nullptr) return;
  if (original == nullptr) return ctx.add(schema_added);
  if (update == nullptr) return ctx.add(schema_removed);
  auto& shared = ctx.shared();
  if (shared.depth >= max_compare_depth) return ctx.add(schema_too_deep_to_compare);
  if (*shared.work > max_compare_work) return ctx.add(schema_too_complex_to_compare);
  const schema_node* o = resolve(original);
  const schema_node* u = resolve(update);
  ++shared.depth;
  auto differences = ctx.memoized(o, u, [o, u, &shared](diff_context& sub) {
    if (++*shared.work > max_compare_work) return sub.add(schema_too_complex_to_compare);
    compare_types(sub, *o, *u);
  });
  --shared.depth;
  ctx.add_rebased(differences);
}

std::vector<difference> compare_schemas(const schema_node* original, const schema_node* update) {
  std::size_t work = 0;
  std::map<diff_context::node_pair, std::vector<difference>> seed;
  for (int pass = 1;; ++pass) {
    diff_context::shared_state shared;
    shared.incompatible_seed = seed;
    shared.work = &work;
    diff_context ctx(shared);
    compare(ctx, original, update);
    std::map<diff_context::node_pair, std::vector<difference>> incompatible;
    for (const auto& [pair, differences] : shared.memo) {
      for (const auto& d : differences) {
        if (is_compatible(d.type)) continue;
        incompatible.emplace(pair, differences);
        break;
      }
    }
    bool same_keys = incompatible.size() == seed.size();
    for (auto a = incompatible.begin(), b = seed.begin(); same_keys && a != incompatible.end(); ++a, ++b)
      same_keys = a->first == b->first;
    if (!shared.optimism_used || same_keys || pass == max_passes) return ctx.differences();
    seed = std::move(incompatible);
  }
}

}  // namespace ferry::json_schema
