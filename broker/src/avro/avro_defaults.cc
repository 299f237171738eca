#include "avro/avro_defaults.h"

#include <climits>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <variant>

#include "avro/avro_json.h"

namespace ferry::avro {
namespace {

// How many placeholders may lead, one inside the other, to types not yet copied; Java would overflow its stack
// somewhere beyond, and no real schema comes close.
constexpr std::size_t max_nested_visits = 1000;

struct default_checker {
  const name_table* names;
  const std::unordered_set<const node*>* complete;

  [[nodiscard]] const node& target(const node& type) const {
    if (names != nullptr && type.unresolved) return *names->at(*type.unresolved);
    return type;
  }

  [[nodiscard]] default_check any_branch(const node& type, const json& value, std::size_t budget) const {
    for (const node* branch : type.branches) {
      const auto verdict = check(*branch, value, budget);
      if (verdict != default_check::invalid) return verdict;
    }
    return default_check::invalid;
  }

  // isValidValue: a union needs one branch, anything else is isValidDefault.
  [[nodiscard]] default_check value_of(const node& type, const json& value, std::size_t budget) const {
    const node& t = target(type);
    return t.type == kind::union_ ? any_branch(t, value, budget) : check(t, value, budget);
  }

  [[nodiscard]] default_check all_of(const node& items, const json& values, std::size_t budget) const {
    for (const auto& element : values) {
      const auto verdict = check(items, element, budget - 1);
      if (verdict != default_check::valid) return verdict;
    }
    return default_check::valid;
  }

  [[nodiscard]] default_check check(const node& type, const json& value, std::size_t budget) const {
    if (budget == 0) return default_check::invalid;
    auto yes = [](bool b) { return b ? default_check::valid : default_check::invalid; };
    const node& t = target(type);
    switch (t.type) {
      case kind::string:
      case kind::bytes:
      case kind::enum_:
      case kind::fixed:
        return yes(value.is_string());
      case kind::int_:
        if (value.is_number_unsigned()) return yes(value.get<std::uint64_t>() <= INT32_MAX);
        return yes(value.is_number_integer() && value.get<std::int64_t>() >= INT32_MIN &&
                   value.get<std::int64_t>() <= INT32_MAX);
      case kind::long_:
        if (value.is_number_unsigned()) return yes(value.get<std::uint64_t>() <= INT64_MAX);
        return yes(value.is_number_integer());
      case kind::float_:
      case kind::double_:
        return yes(value.is_number());
      case kind::boolean:
        return yes(value.is_boolean());
      case kind::null:
        return yes(value.is_null());
      case kind::array:
        return value.is_array() ? all_of(*t.items, value, budget) : default_check::invalid;
      case kind::map:
        return value.is_object() ? all_of(*t.items, value, budget) : default_check::invalid;
      case kind::union_:
        return any_branch(t, value, budget);
      case kind::record:
        if (!value.is_object()) return default_check::invalid;
        if (names != nullptr && complete->count(&t) == 0) return default_check::fails;
        for (const auto& f : t.fields) {
          auto it = value.find(f.name);
          const json* v = it != value.end() ? &*it : (f.default_value ? &*f.default_value : nullptr);
          if (v == nullptr) return default_check::invalid;
          const auto verdict = value_of(*f.type, *v, budget - 1);
          if (verdict != default_check::valid) return verdict;
        }
        return default_check::valid;
    }
    return default_check::invalid;
  }
};

// Schemas.visit with SchemaResolver.ResolvingVisitor, reduced to what decides acceptance: when each record's copy
// gets its fields (and so re-checks their defaults), and which copies are still without fields then.
class resolution_replay {
 public:
  resolution_replay(const name_table& names, std::unordered_set<const node*>& complete, std::size_t budget)
      : names_(names), complete_(complete), budget_(budget) {}

  std::optional<std::string> visit(const node* start) {
    if (++nesting_ > max_nested_visits) return "names used before their definitions nest too deep";
    std::unordered_set<const node*> visited;
    std::vector<std::pair<const node*, bool>> stack{{start, false}};  // (type, is its after-visit)
    while (!stack.empty()) {
      auto [n, after] = stack.back();
      stack.pop_back();
      if (after) {
        if (auto error = after_visit(*n)) return error;
        continue;
      }
      if (visited.count(n) != 0) continue;
      switch (n->type) {
        case kind::array:
        case kind::map:
          stack.emplace_back(n, true);
          stack.emplace_back(n->items, false);
          break;
        case kind::union_:
          stack.emplace_back(n, true);
          for (const node* branch : n->branches) stack.emplace_back(branch, false);
          break;
        case kind::record:
          if (auto error = before_visit(*n)) return error;
          stack.emplace_back(n, true);
          for (auto it = n->fields.rbegin(); it != n->fields.rend(); ++it) stack.emplace_back(it->type, false);
          break;
        default:
          continue;
      }
      visited.insert(n);
    }
    --nesting_;
    return std::nullopt;
  }

 private:
  std::optional<std::string> before_visit(const node& n) {
    if (!n.unresolved) {
      copied_.insert(&n);
      return std::nullopt;
    }
    // A placeholder: its type is copied first, in a visit of its own, unless it has been already.
    const node* target = names_.at(*n.unresolved);
    if (copied_.count(target) == 0 && complete_.count(target) == 0) return visit(target);
    return std::nullopt;
  }

  std::optional<std::string> after_visit(const node& n) {
    if (n.type != kind::record || n.unresolved || complete_.count(&n) != 0) return std::nullopt;
    const default_checker checker{&names_, &complete_};
    for (const auto& f : n.fields) {
      if (!f.default_value) continue;
      const auto verdict = checker.check(*f.type, *f.default_value, budget_);
      const std::string place = "field '" + f.name + "' of record '" + n.name.full() + "'";
      if (verdict == default_check::invalid) return place + ": default is not valid for its type";
      if (verdict == default_check::fails) {
        return place + ": default reaches a record whose fields Avro 1.12 has not resolved yet";
      }
    }
    complete_.insert(&n);
    return std::nullopt;
  }

  const name_table& names_;
  std::unordered_set<const node*>& complete_;
  std::unordered_set<const node*> copied_;
  std::size_t budget_;
  std::size_t nesting_ = 0;
};

}  // namespace

default_check check_default(const node& type, const json& value, const name_table* names,
                            const std::unordered_set<const node*>* complete, std::size_t budget) {
  return default_checker{names, complete}.check(type, value, budget);
}

std::optional<std::string> replay_resolution(const std::vector<node*>& defined, const name_table& names,
                                             std::unordered_set<const node*>& complete, std::size_t budget) {
  resolution_replay replay(names, complete, budget);
  for (const node* n : defined) {
    // Between two top-level visits every copied record is complete, and visiting one again changes nothing.
    if (n->type != kind::record || complete.count(n) != 0) continue;
    if (auto error = replay.visit(n)) return error;
  }
  return std::nullopt;
}

}  // namespace ferry::avro
