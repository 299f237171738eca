// Parsing follows Apache Avro 1.12's Schema.Parser (Schema.java, ParseContext.java) rule by rule: what Java
// accepts we accept, and a refusal names the place in the schema.

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "avro/avro_defaults.h"
#include "avro/avro_json.h"
#include "avro/avro_names.h"
#include "avro/avro_schema.h"

namespace ferry::avro {
namespace {

using schema::schema_error;
using schema::schema_result;

// The keys Java reads itself; every other key of a type or field is a property, kept in order.
enum class reserved { schema, enum_, field };

bool is_reserved(reserved set, std::string_view key) {
  static constexpr std::array<std::string_view, 10> schema_keys = {"doc",  "fields",  "items",  "name", "namespace",
                                                                   "size", "symbols", "values", "type", "aliases"};
  static constexpr std::array<std::string_view, 6> field_keys = {"default", "doc", "name", "order", "type", "aliases"};
  if (set == reserved::field) return std::find(field_keys.begin(), field_keys.end(), key) != field_keys.end();
  if (set == reserved::enum_ && key == "default") return true;
  return std::find(schema_keys.begin(), schema_keys.end(), key) != schema_keys.end();
}

std::optional<kind> primitive_kind(std::string_view name) {
  static const std::map<std::string, kind, std::less<>> primitives = {
      {"null", kind::null},    {"boolean", kind::boolean}, {"int", kind::int_},    {"long", kind::long_},
      {"float", kind::float_}, {"double", kind::double_},  {"bytes", kind::bytes}, {"string", kind::string}};
  auto it = primitives.find(name);
  if (it == primitives.end()) return std::nullopt;
  return it->second;
}

// Jackson's `textValue()`: the string, or nothing for any other kind of value (Java then treats the key as absent).
std::optional<std::string> text_of(const json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// Jackson allows comments, but Avro's parser refuses anything but whitespace after the root value, a comment
// included. Finds where a root object, array or string ends (other roots are refused anyway) and reports whether
// something else follows.
bool content_after_root(std::string_view text) {
  std::size_t i = 0;
  auto skip_comment = [&]() {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      i = i == std::string_view::npos ? text.size() : i;
      return true;
    }
    if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i + 2);
      i = i == std::string_view::npos ? text.size() : i + 2;
      return true;
    }
    return false;
  };
  while (i < text.size() && (static_cast<unsigned char>(text[i]) <= ' ' || skip_comment())) {
    if (i < text.size() && static_cast<unsigned char>(text[i]) <= ' ') ++i;
  }
  std::size_t depth = 0;
  bool in_string = false;
  while (i < text.size()) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) break;
      }
      ++i;
      continue;
    }
    if (skip_comment()) continue;
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0 && --depth == 0) {
      break;
    } else if (depth == 0) {
      return false;
    }
    ++i;
  }
  for (++i; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) > ' ') return true;
  }
  return false;
}

std::string excerpt(const json& value) {
  std::string text;
  append_json_value(text, value);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Java's `Double.parseDouble` for the textual default of a float or double field ("NaN", "1e3", " 2.5d ").
std::optional<double> java_parse_double(std::string text) {
  auto is_space = [](char c) { return static_cast<unsigned char>(c) <= ' '; };
  while (!text.empty() && is_space(text.back())) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && is_space(text[start])) ++start;
  text = text.substr(start);
  std::string body = text;
  std::string sign;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
    sign = body.substr(0, 1);
    body = body.substr(1);
  }
  if (body == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (body == "Infinity") return sign == "-" ? -HUGE_VAL : HUGE_VAL;
  if (!body.empty() && std::string_view("fFdD").find(body.back()) != std::string_view::npos) body.pop_back();
  if (body.empty() || body.find_first_not_of("0123456789.eE+-xXpPabcdefABCDEF") != std::string::npos) {
    return std::nullopt;
  }
  if (body.find_first_of("xX") == std::string::npos && body.find_first_not_of("0123456789.eE+-") != std::string::npos) {
    return std::nullopt;
  }
  const std::string number = sign + body;
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || number.find_first_of("0123456789") == std::string::npos) {
    return std::nullopt;
  }
  return value;
}

class parser {
 public:
  parser(node_pool& pool, const schema::parse_limits& limits) : pool_(pool), limits_(limits) {}

  // One text parsed into the shared name table, its forward references resolved, as one `Parser.parse` call.
  schema_result<node*> parse_text(std::string_view text, std::string_view what) {
    auto in = [&](const std::string& message) { return schema_error{std::string(what) + message}; };
    // Avro's Jackson parser allows comments.
    json document = json::parse(text, nullptr, false, true);
    if (document.is_discarded()) return in("not valid JSON");
    if (content_after_root(text)) return in("content after the end of the schema");
    first_new_node_ = pool_.nodes.size();
    placeholders_.clear();
    defined_.clear();
    auto root = parse(document, "", 0);
    if (!root) return in(root.error().message);
    if (auto resolved = resolve(); !resolved) return in(resolved.error().message);
    node* result = root.value();
    if (result->unresolved) result = names_.at(*result->unresolved);
    return result;
  }

 private:
  schema_result<node*> parse(const json& j, const std::string& space, std::size_t depth) {
    if (depth >= limits_.max_depth) {
      return schema_error{"types nested deeper than " + std::to_string(limits_.max_depth) + " levels"};
    }
    if (j.is_string()) return find(j.get<std::string>(), space);
    if (j.is_array()) return parse_union(j, space, depth);
    if (!j.is_object()) return schema_error{"schema not yet supported: " + excerpt(j)};
    auto type = text_of(j, "type");
    if (!type) return schema_error{"no \"type\" in " + excerpt(j)};
    if (auto primitive = primitive_kind(*type)) {
      node* n = pool_.make(*primitive);
      if (auto props = parse_props(j, reserved::schema, n->props, *type); !props) return props.error();
      return n;
    }
    if (*type == "record" || *type == "error") return parse_record(j, space, depth, *type == "error");
    if (*type == "enum") return parse_enum(j, space);
    if (*type == "array" || *type == "map") return parse_container(j, space, depth, *type == "array");
    if (*type == "fixed") return parse_fixed(j, space);
    return schema_error{"type \"" + *type +
                        "\" is not a primitive type nor one of \"enum\", \"fixed\", \"record\", \"error\", "
                        "\"array\" or \"map\""};
  }

  // ParseContext.find: a primitive, the name in the current namespace, the name as written, or a placeholder.
  schema_result<node*> find(const std::string& name, const std::string& space) {
    if (auto primitive = primitive_kind(name)) return pool_.make(*primitive);
    const std::string full = (!space.empty() && name.find('.') == std::string::npos) ? space + "." + name : name;
    if (auto it = names_.find(full); it != names_.end()) return it->second;
    if (auto it = names_.find(name); it != names_.end()) return it->second;
    node* placeholder = pool_.make(kind::record);
    placeholder->unresolved = full;
    placeholders_.push_back(placeholder);
    return placeholder;
  }

  schema_result<void> count(std::size_t n) {
    elements_ += n;
    if (elements_ > limits_.max_elements) {
      return schema_error{"more than " + std::to_string(limits_.max_elements) +
                          " named types, fields, symbols and properties"};
    }
    return boost::outcome_v2::success();
  }

  schema_result<void> parse_props(const json& j, reserved keys, json& props, const std::string& where) {
    for (const auto& [key, value] : j.items()) {
      if (is_reserved(keys, key)) continue;
      if (json_depth(value, limits_.max_depth) > limits_.max_depth) {
        return schema_error{
            std::string("property '").append(key).append("' of ").append(where).append(" nested too deep")};
      }
      if (auto counted = count(1); !counted) return counted;
      props[key] = value;
    }
    return boost::outcome_v2::success();
  }

  // Schema.Name: a dotted name carries its namespace; "" is the null namespace.
  schema_result<avro_name> parse_name(const json& j, const std::string& space) {
    auto name = text_of(j, "name");
    if (!name) return schema_error{"no \"name\" in " + excerpt(j)};
    return make_name(*name, text_of(j, "namespace").value_or(space));
  }

  static schema_result<avro_name> make_name(const std::string& name, std::string space) {
    avro_name result;
    const auto dot = name.rfind('.');
    if (dot != std::string::npos) {
      space = name.substr(0, dot);
      result.name = name.substr(dot + 1);
    } else {
      result.name = name;
    }
    if (auto invalid = name_error(result.name)) return schema_error{"name \"" + name + "\": " + *invalid};
    result.space = space;
    return result;
  }

  // The checks Java makes when it creates a named type, before its content.
  static schema_result<void> check_named(const avro_name& name) {
    if (primitive_kind(name.full())) return schema_error{"a type may not be named after a primitive: " + name.full()};
    return boost::outcome_v2::success();
  }

  schema_result<void> parse_aliases(const json& j, std::vector<std::string>& out, const std::string& where) {
    const json* aliases = member(j, "aliases");
    if (aliases == nullptr) return boost::outcome_v2::success();
    if (!aliases->is_array()) return schema_error{"aliases of " + where + " are not an array"};
    for (const auto& alias : *aliases) {
      if (!alias.is_string()) return schema_error{"alias " + excerpt(alias) + " of " + where + " is not a string"};
      auto text = alias.get<std::string>();
      if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
    }
    return boost::outcome_v2::success();
  }

  schema_result<void> parse_named_aliases(const json& j, node& n) {
    std::vector<std::string> texts;
    if (auto parsed = parse_aliases(j, texts, n.name.full()); !parsed) return parsed;
    for (const auto& text : texts) {
      auto alias = make_name(text, n.name.space);
      if (!alias) return schema_error{"alias of " + n.name.full() + ": " + alias.error().message};
      const auto full = alias.value().full();
      const bool seen =
          std::any_of(n.aliases.begin(), n.aliases.end(), [&](const avro_name& a) { return a.full() == full; });
      if (!seen) n.aliases.push_back(std::move(alias).value());
    }
    return boost::outcome_v2::success();
  }

  // ParseContext.put: namespace parts valid, and a name defined twice only with equal definitions.
  schema_result<void> define(node* n) {
    const std::string full = n->name.full();
    // Java splits the full name at dots, so an empty part (as in "a..b" or "a.") is an invalid name.
    std::string_view rest = n->name.space;
    while (!n->name.space.empty()) {
      const auto dot = rest.find('.');
      const auto part = rest.substr(0, dot);
      if (auto invalid = name_error(part)) {
        return schema_error{"namespace part \"" + std::string(part) + "\" of " + full + ": " + *invalid};
      }
      if (dot == std::string_view::npos) break;
      rest = rest.substr(dot + 1);
    }
    if (auto it = names_.find(full); it != names_.end()) {
      if (to_canonical_json(*it->second, {}, true) != to_canonical_json(*n, {}, true)) {
        return schema_error{"can't redefine " + full};
      }
      return boost::outcome_v2::success();
    }
    names_.emplace(full, n);
    defined_.push_back(n);
    return count(1);
  }

  schema_result<node*> parse_record(const json& j, const std::string& space, std::size_t depth, bool is_error) {
    auto name = parse_name(j, space);
    if (!name) return name.error();
    if (auto named = check_named(name.value()); !named) return named.error();
    node* n = pool_.make(kind::record);
    n->is_error = is_error;
    n->name = std::move(name).value();
    n->doc = text_of(j, "doc");
    const std::string where = "record '" + n->name.full() + "'";
    const json* fields = member(j, "fields");
    if (fields == nullptr || !fields->is_array()) return schema_error{where + " has no fields array"};
    for (const auto& f : *fields) {
      auto parsed = parse_field(f, n->name.space, depth, where);
      if (!parsed) return parsed.error();
      n->fields.push_back(std::move(parsed).value());
    }
    std::set<std::string, std::less<>> field_names;
    for (const auto& f : n->fields) {
      if (!field_names.insert(f.name).second) return schema_error{"duplicate field '" + f.name + "' in " + where};
    }
    if (auto props = parse_props(j, reserved::schema, n->props, where); !props) return props.error();
    if (auto aliases = parse_named_aliases(j, *n); !aliases) return aliases.error();
    if (auto defined = define(n); !defined) return defined.error();
    return n;
  }

  schema_result<field> parse_field(const json& j, const std::string& space, std::size_t depth,
                                   const std::string& where) {
    auto name = text_of(j, "name");
    if (!name) return schema_error{"a field of " + where + " has no name: " + excerpt(j)};
    field f;
    f.name = *name;
    const std::string place = "field '" + f.name + "' of " + where;
    if (auto counted = count(1); !counted) return counted.error();
    f.doc = text_of(j, "doc");
    const json* type = member(j, "type");
    if (type == nullptr) return schema_error{place + " has no type"};
    auto parsed = parse(*type, space, depth + 1);
    if (!parsed) return parsed.error();
    f.type = parsed.value();
    if (const json* order = member(j, "order")) {
      std::string text = order->is_string() ? order->get<std::string>() : std::string("?");
      std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
      if (text != "ascending" && text != "descending" && text != "ignore") {
        return schema_error{place + ": order " + excerpt(*order) + " is not ascending, descending or ignore"};
      }
      f.order = text;
    }
    if (const json* value = member(j, "default")) {
      if (json_depth(*value, limits_.max_depth) > limits_.max_depth) {
        return schema_error{place + ": default nested too deep"};
      }
      f.default_value = *value;
      if ((f.type->type == kind::float_ || f.type->type == kind::double_) && value->is_string()) {
        auto number = java_parse_double(value->get<std::string>());
        if (!number) return schema_error{place + ": default " + excerpt(*value) + " is not a number"};
        f.default_value = json(*number);
      }
    }
    if (auto invalid = name_error(f.name)) return schema_error{place + ": " + *invalid};
    if (auto valid = check_default(f, place); !valid) return valid.error();
    if (auto props = parse_props(j, reserved::field, f.props, place); !props) return props.error();
    if (auto aliases = parse_aliases(j, f.aliases, place); !aliases) return aliases.error();
    return f;
  }

  schema_result<void> check_default(const field& f, const std::string& place) {
    if (f.default_value &&
        avro::check_default(*f.type, *f.default_value, nullptr, nullptr, limits_.max_depth) != default_check::valid) {
      return schema_error{place + ": default " + excerpt(*f.default_value) + " is not a valid " +
                          std::string(avro_type_name(f.type->type))};
    }
    return boost::outcome_v2::success();
  }

  schema_result<node*> parse_enum(const json& j, const std::string& space) {
    auto name = parse_name(j, space);
    if (!name) return name.error();
    if (auto named = check_named(name.value()); !named) return named.error();
    node* n = pool_.make(kind::enum_);
    n->name = std::move(name).value();
    n->doc = text_of(j, "doc");
    const std::string where = "enum '" + n->name.full() + "'";
    const json* symbols = member(j, "symbols");
    if (symbols == nullptr || !symbols->is_array()) return schema_error{where + " has no symbols array"};
    std::set<std::string, std::less<>> seen;
    for (const auto& symbol : *symbols) {
      if (!symbol.is_string()) return schema_error{where + ": symbol " + excerpt(symbol) + " is not a string"};
      auto text = symbol.get<std::string>();
      if (auto invalid = name_error(text)) {
        return schema_error{std::string(where).append(": symbol \"").append(text).append("\": ").append(*invalid)};
      }
      if (!seen.insert(text).second) {
        return schema_error{std::string(where).append(": duplicate symbol \"").append(text).append("\"")};
      }
      if (auto counted = count(1); !counted) return counted.error();
      n->symbols.push_back(std::move(text));
    }
    n->enum_default = text_of(j, "default");
    if (n->enum_default && seen.count(*n->enum_default) == 0) {
      return schema_error{where + ": default \"" + *n->enum_default + "\" is not one of its symbols"};
    }
    if (auto props = parse_props(j, reserved::enum_, n->props, where); !props) return props.error();
    if (auto aliases = parse_named_aliases(j, *n); !aliases) return aliases.error();
    if (auto defined = define(n); !defined) return defined.error();
    return n;
  }

  schema_result<node*> parse_container(const json& j, const std::string& space, std::size_t depth, bool is_array) {
    const char* key = is_array ? "items" : "values";
    const json* inner = member(j, key);
    if (inner == nullptr) return schema_error{std::string(is_array ? "array" : "map") + " has no " + key + " type"};
    auto parsed = parse(*inner, space, depth + 1);
    if (!parsed) return parsed.error();
    node* n = pool_.make(is_array ? kind::array : kind::map);
    n->items = parsed.value();
    if (auto props = parse_props(j, reserved::schema, n->props, is_array ? "an array" : "a map"); !props) {
      return props.error();
    }
    return n;
  }

  schema_result<node*> parse_fixed(const json& j, const std::string& space) {
    auto name = parse_name(j, space);
    if (!name) return name.error();
    if (auto named = check_named(name.value()); !named) return named.error();
    node* n = pool_.make(kind::fixed);
    n->name = std::move(name).value();
    n->doc = text_of(j, "doc");
    const std::string where = "fixed '" + n->name.full() + "'";
    const json* size = member(j, "size");
    // Jackson's isInt(): an integer literal within int32; Avro then bounds it by its maximum byte length.
    const bool is_int =
        size != nullptr && size->is_number_integer() &&
        (size->is_number_unsigned() ? size->get<std::uint64_t>() <= INT32_MAX
                                    : size->get<std::int64_t>() >= INT32_MIN && size->get<std::int64_t>() <= INT32_MAX);
    if (!is_int) return schema_error{where + " has no valid size"};
    n->size = size->get<std::int64_t>();
    if (n->size < 0 || n->size > INT32_MAX - 8) return schema_error{where + ": size " + std::to_string(n->size)};
    if (auto props = parse_props(j, reserved::schema, n->props, where); !props) return props.error();
    if (auto aliases = parse_named_aliases(j, *n); !aliases) return aliases.error();
    if (auto defined = define(n); !defined) return defined.error();
    return n;
  }

  schema_result<node*> parse_union(const json& j, const std::string& space, std::size_t depth) {
    node* n = pool_.make(kind::union_);
    for (const auto& branch : j) {
      auto parsed = parse(branch, space, depth + 1);
      if (!parsed) return parsed.error();
      n->branches.push_back(parsed.value());
    }
    if (auto checked = check_union(*n); !checked) return checked.error();
    return n;
  }

  // UnionSchema's constructor: no union in a union, no two branches with the same full name.
  static schema_result<void> check_union(const node& n) {
    std::set<std::string, std::less<>> names;
    for (const node* branch : n.branches) {
      if (branch->type == kind::union_) return schema_error{"a union may not contain a union"};
      // Java names each placeholder uniquely, so they never collide before resolution.
      if (branch->unresolved) continue;
      if (!names.insert(branch->full_name()).second) {
        return schema_error{"duplicate " + branch->full_name() + " in a union"};
      }
    }
    return boost::outcome_v2::success();
  }

  // The end of Parser.parse: every placeholder must name a defined type, and the copies Java then makes re-check
  // unions and field defaults against the resolved types.
  schema_result<void> resolve() {
    for (const node* placeholder : placeholders_) {
      if (names_.count(*placeholder->unresolved) == 0) {
        return schema_error{"undefined name: " + *placeholder->unresolved};
      }
    }
    if (auto refused = replay_resolution(defined_, names_, complete_, limits_.max_depth)) return schema_error{*refused};
    if (placeholders_.empty()) return boost::outcome_v2::success();
    auto target = [&](node*& slot) {
      if (slot != nullptr && slot->unresolved) slot = names_.at(*slot->unresolved);
    };
    for (std::size_t i = first_new_node_; i < pool_.nodes.size(); ++i) {
      node& n = *pool_.nodes[i];
      target(n.items);
      for (auto& branch : n.branches) target(branch);
      for (auto& f : n.fields) target(f.type);
    }
    for (std::size_t i = first_new_node_; i < pool_.nodes.size(); ++i) {
      if (pool_.nodes[i]->type != kind::union_) continue;
      if (auto checked = check_union(*pool_.nodes[i]); !checked) return checked;
    }
    return boost::outcome_v2::success();
  }

  node_pool& pool_;
  const schema::parse_limits& limits_;
  std::map<std::string, node*, std::less<>> names_;
  std::vector<node*> placeholders_;
  std::vector<node*> defined_;                // this text's named types, in the order Java registers them
  std::unordered_set<const node*> complete_;  // records whose defaults passed the end-of-text check
  std::size_t first_new_node_ = 0;
  std::size_t elements_ = 0;
};

}  // namespace

schema::schema_result<schema::schema_ptr> parse(std::string_view text,
                                                const std::vector<schema::named_schema>& references,
                                                const schema::parse_limits& limits) {
  auto pool = std::make_shared<node_pool>();
  parser p(*pool, limits);
  std::vector<std::string> reference_names;
  for (const auto& reference : references) {
    auto parsed = p.parse_text(reference.text, "reference '" + reference.name + "': ");
    if (!parsed) return parsed.error();
    reference_names.push_back(parsed.value()->full_name());
  }
  auto root = p.parse_text(text, "");
  if (!root) return root.error();
  return std::make_shared<const avro_schema>(std::move(pool), root.value(), std::move(reference_names));
}

}  // namespace ferry::avro
