#include "json_schema/schema_loader.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>

#include "json_schema/json_document.h"

namespace ferry::json_schema {
namespace {

// The keywords that make everit build a schema of one type when "type" does not say (its property sniffing).
// The 2019-09 and 2020-12 keywords are read as Confluent translates them into the draft-7 model.
constexpr std::array array_keywords = {"items",    "additionalItems", "maxItems",         "minItems",    "uniqueItems",
                                       "contains", "prefixItems",     "unevaluatedItems", "minContains", "maxContains"};
constexpr std::array object_keywords = {
    "properties",        "required",          "minProperties",        "maxProperties",
    "dependencies",      "patternProperties", "additionalProperties", "propertyNames",
    "dependentRequired", "dependentSchemas",  "unevaluatedProperties"};
constexpr std::array number_keywords = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"};
constexpr std::array string_keywords = {"minLength", "maxLength", "pattern", "format"};
constexpr std::array conditional_keywords = {"if", "then", "else"};

template <std::size_t N>
bool has_any(const json& object, const std::array<const char*, N>& keywords) {
  for (const char* keyword : keywords)
    if (object.contains(keyword)) return true;
  return false;
}

const json* member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool is_schema(const json& value) { return value.is_object() || value.is_boolean(); }

// Resolves a URI reference against a base the simple way $ref URLs in registered schemas need: absolute URIs stand,
// absolute paths keep the base's scheme and authority, relative paths replace the base's last segment.
std::string resolve_uri(std::string_view base, std::string_view ref) {
  if (ref.find("://") != std::string_view::npos || ref.rfind("urn:", 0) == 0 || base.empty()) return std::string(ref);
  if (ref.rfind("./", 0) == 0) ref.remove_prefix(2);
  if (!ref.empty() && ref.front() == '/') {
    const auto scheme = base.find("://");
    const auto path = scheme == std::string_view::npos ? 0 : base.find('/', scheme + 3);
    return std::string(base.substr(0, path == std::string_view::npos ? base.size() : path)) + std::string(ref);
  }
  const auto slash = base.rfind('/');
  if (slash == std::string_view::npos) return std::string(ref);
  return std::string(base.substr(0, slash + 1)) + std::string(ref);
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    unsigned value = 0;
    for (std::size_t j = i + 1; j <= i + 2; ++j) {
      const char c = text[j];
      value *= 16;
      if (c >= '0' && c <= '9') {
        value += static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value += static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value += static_cast<unsigned>(c - 'A' + 10);
      } else {
        return std::nullopt;
      }
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

// Splits "/a/b~1c" into its unescaped tokens.
std::optional<std::vector<std::string>> pointer_tokens(std::string_view fragment) {
  auto decoded = percent_decode(fragment);
  if (!decoded) return std::nullopt;
  std::vector<std::string> tokens;
  std::string_view rest = *decoded;
  while (!rest.empty()) {
    rest.remove_prefix(1);
    const auto end = rest.find('/');
    const std::string_view raw = rest.substr(0, end);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(std::move(token));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  }
  return tokens;
}

const json* follow(const json& document, const std::vector<std::string>& tokens) {
  const json* at = &document;
  for (const auto& token : tokens) {
    if (at->is_object()) {
      at = member(*at, token.c_str());
      if (at == nullptr) return nullptr;
    } else if (at->is_array()) {
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (token.empty() || ec != std::errc() || end != token.data() + token.size() || index >= at->size())
        return nullptr;
      at = &(*at)[index];
    } else {
      return nullptr;
    }
  }
  return at;
}

class loader {
 public:
  loader(schema_graph& graph, const schema::parse_limits& limits) : graph_(graph), limits_(limits) {
    for (const auto& document : graph_.documents) modern_.push_back(is_modern(*document));
  }

  const schema_node* load_root() {
    const schema_node* root = load(*graph_.documents[0], 0, {});
    while (root != nullptr && !pending_.empty()) {
      auto ref = std::move(pending_.back());
      pending_.pop_back();
      if (!resolve_reference(ref)) return nullptr;
    }
    if (root != nullptr && !check_reference_cycles()) return nullptr;
    return root;
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  struct pending_reference {
    schema_node* node;
    std::string ref;
    std::size_t document;
    std::vector<std::string> path;
  };

  bool fail(std::size_t document, const std::vector<std::string>& path, const std::string& problem) {
    if (!error_.empty()) return false;
    error_ = problem + " at " + pointer_text(path);
    if (document != 0) error_ += " in reference '" + graph_.document_names[document] + "'";
    return false;
  }

  schema_node* make(node_kind kind, const json* source) {
    if (graph_.nodes.size() >= limits_.max_elements) {
      error_ = "more than " + std::to_string(limits_.max_elements) + " schemas";
      return nullptr;
    }
    graph_.nodes.push_back(std::make_unique<schema_node>());
    schema_node* node = graph_.nodes.back().get();
    node->kind = kind;
    node->source = source;
    return node;
  }

  // Loads the schema at `path` of a document. Every schema of a document is loaded once, so a `$ref` and the place
  // it points to share one node (the diff memoizes and breaks cycles by node).
  const schema_node* load(const json& value, std::size_t document, std::vector<std::string> path) {
    if (auto it = loaded_.find(&value); it != loaded_.end()) return it->second;
    schema_node* node = nullptr;
    if (value.is_boolean()) {
      node = make(value.get<bool>() ? node_kind::true_schema : node_kind::false_schema, &value);
    } else if (!value.is_object()) {
      fail(document, path, "a schema must be an object or a boolean");
    } else {
      node = load_object(value, document, path);
    }
    if (node != nullptr) loaded_.emplace(&value, node);
    return node;
  }

  schema_node* load_object(const json& value, std::size_t document, std::vector<std::string>& path) {
    if (!check_object_keywords(value, document, path)) return nullptr;
    std::vector<schema_node*> extracted;
    if (const json* ref = member(value, "$ref")) {
      if (!ref->is_string()) return fail(document, with(path, "$ref"), "$ref must be a string"), nullptr;
      schema_node* node = make(node_kind::reference, &value);
      if (node == nullptr) return nullptr;
      pending_.push_back({node, ref->get<std::string>(), document, path});
      // Draft 7 ignores what stands beside a $ref; 2019-09 and 2020-12 apply it too (an allOf with the $ref).
      if (!modern_[document]) return annotate(node, value, document);
      extracted.push_back(node);
    }
    if (const json* values = member(value, "enum")) {
      if (!values->is_array()) return fail(document, with(path, "enum"), "enum must be an array"), nullptr;
      schema_node* node = make(node_kind::enum_schema, &value);
      if (node == nullptr) return nullptr;
      for (const auto& v : *values) node->enum_values.push_back(&v);
      extracted.push_back(node);
    }
    for (auto [keyword, combine] : {std::pair{"allOf", criterion::all_of}, std::pair{"anyOf", criterion::any_of},
                                    std::pair{"oneOf", criterion::one_of}}) {
      const json* list = member(value, keyword);
      if (list == nullptr) continue;
      if (!list->is_array())
        return fail(document, with(path, keyword), std::string(keyword) + " must be an array"), nullptr;
      schema_node* node = make(node_kind::combined, &value);
      if (node == nullptr) return nullptr;
      node->combine = combine;
      for (std::size_t i = 0; i < list->size(); ++i) {
        const schema_node* sub = load((*list)[i], document, with(with(path, keyword), std::to_string(i)));
        if (sub == nullptr) return nullptr;
        node->subschemas.push_back(sub);
      }
      extracted.push_back(node);
    }
    if (const json* negated = member(value, "not")) {
      schema_node* node = make(node_kind::not_schema, &value);
      if (node == nullptr || (node->must_not_match = load(*negated, document, with(path, "not"))) == nullptr)
        return nullptr;
      extracted.push_back(node);
    }
    if (const json* constant = member(value, "const")) {
      schema_node* node = make(node_kind::const_schema, &value);
      if (node == nullptr) return nullptr;
      node->const_value = constant;
      extracted.push_back(node);
    }
    if (!load_typed(value, document, path, extracted)) return nullptr;
    schema_node* effective = nullptr;
    if (extracted.empty()) {
      effective = make(node_kind::empty, &value);
    } else if (extracted.size() == 1) {
      effective = extracted.front();
    } else {
      effective = make(node_kind::combined, &value);
      if (effective != nullptr) effective->subschemas.assign(extracted.begin(), extracted.end());
    }
    return effective == nullptr ? nullptr : annotate(effective, value, document);
  }

  static std::vector<std::string> with(const std::vector<std::string>& path, const std::string& token) {
    auto out = path;
    out.push_back(token);
    return out;
  }

  // Confluent loads 2019-09 and 2020-12 schemas with json-sKema, for which $id is a base URI, never compared.
  static bool is_modern(const json& document) {
    const json* dialect = document.is_object() ? member(document, "$schema") : nullptr;
    if (dialect == nullptr || !dialect->is_string()) return false;
    const auto& uri = dialect->get_ref<const std::string&>();
    return uri.find("/draft/2019-09/") != std::string::npos || uri.find("/draft/2020-12/") != std::string::npos;
  }

  schema_node* annotate(schema_node* node, const json& value, std::size_t document) const {
    if (!modern_[document]) node->id = member(value, "$id") != nullptr ? member(value, "$id") : member(value, "id");
    node->title = member(value, "title");
    node->description = member(value, "description");
    node->default_value = member(value, "default");
    node->connect_type = member(value, "connect.type");
    return node;
  }

  // Type checks for the keywords that are not read by one type's builder.
  bool check_object_keywords(const json& value, std::size_t document, const std::vector<std::string>& path) {
    for (const char* keyword : {"$id", "title", "description", "$schema"}) {
      const json* v = member(value, keyword);
      if (v != nullptr && !v->is_string())
        return fail(document, with(path, keyword), std::string(keyword) + " must be a string");
    }
    for (const char* keyword : {"definitions", "$defs"}) {
      const json* v = member(value, keyword);
      if (v == nullptr) continue;
      if (!v->is_object()) return fail(document, with(path, keyword), std::string(keyword) + " must be an object");
      for (const auto& [name, schema] : v->items())
        if (!is_schema(schema))
          return fail(document, with(with(path, keyword), name), "a schema must be an object or a boolean");
    }
    return true;
  }

  bool load_typed(const json& value, std::size_t document, std::vector<std::string>& path,
                  std::vector<schema_node*>& extracted) {
    bool consumed_array = false;
    bool consumed_object = false;
    bool consumed_number = false;
    bool consumed_string = false;
    if (const json* type = member(value, "type")) {
      std::vector<std::string> names;
      if (type->is_string()) {
        names.push_back(type->get<std::string>());
      } else if (type->is_array()) {
        for (const auto& name : *type) {
          if (!name.is_string()) return fail(document, with(path, "type"), "type must name types");
          names.push_back(name.get<std::string>());
        }
      } else {
        return fail(document, with(path, "type"), "type must be a string or an array");
      }
      std::vector<schema_node*> typed;
      for (const auto& name : names) {
        schema_node* node = load_type(name, value, document, path);
        if (node == nullptr) return false;
        consumed_array |= node->kind == node_kind::array;
        consumed_object |= node->kind == node_kind::object;
        consumed_number |= node->kind == node_kind::number;
        consumed_string |= node->kind == node_kind::string;
        typed.push_back(node);
      }
      if (type->is_string()) {
        extracted.push_back(typed.front());
      } else {
        schema_node* any = make(node_kind::combined, &value);
        if (any == nullptr) return false;
        any->combine = criterion::any_of;
        any->subschemas.assign(typed.begin(), typed.end());
        extracted.push_back(any);
      }
    }
    const std::array<std::pair<bool, const char*>, 4> sniffed = {
        std::pair{!consumed_array && has_any(value, array_keywords), "array"},
        std::pair{!consumed_object && has_any(value, object_keywords), "object"},
        std::pair{!consumed_number && has_any(value, number_keywords), "number"},
        std::pair{!consumed_string && has_any(value, string_keywords), "string"}};
    for (const auto& [present, name] : sniffed) {
      if (!present) continue;
      schema_node* node = load_type(name, value, document, path);
      if (node == nullptr) return false;
      extracted.push_back(node);
    }
    if (has_any(value, conditional_keywords)) {
      schema_node* node = make(node_kind::conditional, &value);
      if (node == nullptr) return false;
      for (const char* keyword : conditional_keywords)
        if (const json* sub = member(value, keyword);
            sub != nullptr && load(*sub, document, with(path, keyword)) == nullptr)
          return false;
      extracted.push_back(node);
    }
    return true;
  }

  schema_node* load_type(const std::string& name, const json& value, std::size_t document,
                         const std::vector<std::string>& path) {
    static const std::unordered_map<std::string, node_kind> kinds = {
        {"string", node_kind::string},   {"number", node_kind::number}, {"integer", node_kind::number},
        {"boolean", node_kind::boolean}, {"null", node_kind::null},     {"object", node_kind::object},
        {"array", node_kind::array}};
    auto it = kinds.find(name);
    if (it == kinds.end())
      return fail(document, with(path, "type"), "unknown type '" + name.substr(0, 40) + "'"), nullptr;
    schema_node* node = make(it->second, &value);
    if (node == nullptr) return nullptr;
    node->requires_integer = name == "integer";
    bool ok = true;
    if (node->kind == node_kind::string) ok = load_string(*node, value, document, path);
    if (node->kind == node_kind::number) ok = load_number(*node, value, document, path);
    if (node->kind == node_kind::object) ok = load_object_keywords(*node, value, document, path);
    if (node->kind == node_kind::array) ok = load_array(*node, value, document, path);
    return ok ? node : nullptr;
  }

  bool count(std::optional<std::int64_t>& out, const json& value, const char* keyword, std::size_t document,
             const std::vector<std::string>& path) {
    const json* v = member(value, keyword);
    if (v == nullptr) return true;
    if (v->is_number_integer()) {
      out = v->get<std::int64_t>();
    } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
               std::trunc(v->get<double>()) == v->get<double>() && std::fabs(v->get<double>()) < 9e15) {
      out = static_cast<std::int64_t>(v->get<double>());
    } else {
      return fail(document, with(path, keyword), std::string(keyword) + " must be an integer");
    }
    return true;
  }

  bool number(std::optional<double>& out, const json& value, const char* keyword, std::size_t document,
              const std::vector<std::string>& path, bool boolean_allowed = false) {
    const json* v = member(value, keyword);
    if (v == nullptr || (boolean_allowed && v->is_boolean())) return true;
    if (!v->is_number()) return fail(document, with(path, keyword), std::string(keyword) + " must be a number");
    out = v->get<double>();
    return true;
  }

  // A schema-valued keyword: nullptr in `out` when absent.
  bool child(const schema_node*& out, const json& value, const char* keyword, std::size_t document,
             const std::vector<std::string>& path) {
    const json* v = member(value, keyword);
    if (v == nullptr) return true;
    out = load(*v, document, with(path, keyword));
    return out != nullptr;
  }

  bool load_string(schema_node& node, const json& value, std::size_t document, const std::vector<std::string>& path) {
    if (!count(node.max_length, value, "maxLength", document, path) ||
        !count(node.min_length, value, "minLength", document, path))
      return false;
    for (const char* keyword : {"pattern", "format"}) {
      const json* v = member(value, keyword);
      if (v != nullptr && !v->is_string())
        return fail(document, with(path, keyword), std::string(keyword) + " must be a string");
    }
    if (const json* pattern = member(value, "pattern")) node.pattern = pattern->get<std::string>();
    return true;
  }

  bool load_number(schema_node& node, const json& value, std::size_t document, const std::vector<std::string>& path) {
    // Draft 4 spells exclusive bounds as booleans on maximum/minimum; everit then has no exclusive limit.
    if (!number(node.maximum, value, "maximum", document, path) ||
        !number(node.minimum, value, "minimum", document, path) ||
        !number(node.exclusive_maximum, value, "exclusiveMaximum", document, path, true) ||
        !number(node.exclusive_minimum, value, "exclusiveMinimum", document, path, true))
      return false;
    if (const json* multiple = member(value, "multipleOf")) {
      if (!multiple->is_number() || multiple->get<double>() <= 0)
        return fail(document, with(path, "multipleOf"), "multipleOf must be a number above 0");
      node.multiple_of = multiple;
    }
    return true;
  }

  bool load_object_keywords(schema_node& node, const json& value, std::size_t document,
                            const std::vector<std::string>& path) {
    if (const json* properties = member(value, "properties")) {
      if (!properties->is_object()) return fail(document, with(path, "properties"), "properties must be an object");
      for (const auto& [name, schema] : properties->items()) {
        const schema_node* sub = load(schema, document, with(with(path, "properties"), name));
        if (sub == nullptr) return false;
        node.properties.emplace_back(name, sub);
      }
    }
    if (const json* required = member(value, "required")) {
      if (!required->is_array()) return fail(document, with(path, "required"), "required must be an array of names");
      for (const auto& name : *required) {
        if (!name.is_string()) return fail(document, with(path, "required"), "required must be an array of names");
        node.required.push_back(name.get<std::string>());
      }
    }
    if (const json* additional = member(value, "additionalProperties");
        additional != nullptr && additional->is_boolean()) {
      node.permits_additional_properties = additional->get<bool>();
    } else if (!child(node.additional_properties, value, "additionalProperties", document, path)) {
      return false;
    }
    if (const json* patterns = member(value, "patternProperties")) {
      if (!patterns->is_object())
        return fail(document, with(path, "patternProperties"), "patternProperties must be an object");
      for (const auto& [pattern, schema] : patterns->items()) {
        const schema_node* sub = load(schema, document, with(with(path, "patternProperties"), pattern));
        if (sub == nullptr) return false;
        re2::RE2::Options options;
        options.set_log_errors(false);
        node.pattern_properties.push_back({std::make_shared<const re2::RE2>(pattern, options), sub});
      }
    }
    if (!load_dependencies(node, value, document, path)) return false;
    const schema_node* ignored = nullptr;
    return count(node.max_properties, value, "maxProperties", document, path) &&
           count(node.min_properties, value, "minProperties", document, path) &&
           child(ignored, value, "propertyNames", document, path) &&
           child(node.unevaluated_properties, value, "unevaluatedProperties", document, path);
  }

  // Draft 7's dependencies, or 2019-09's dependentRequired (names) and dependentSchemas (schemas).
  bool load_dependencies(schema_node& node, const json& value, std::size_t document,
                         const std::vector<std::string>& path) {
    for (const char* keyword : {"dependencies", "dependentRequired", "dependentSchemas"}) {
      const json* dependencies = member(value, keyword);
      if (dependencies == nullptr) continue;
      if (!dependencies->is_object())
        return fail(document, with(path, keyword), std::string(keyword) + " must be an object");
      for (const auto& [name, dependency] : dependencies->items()) {
        const bool names_expected = std::string_view(keyword) == "dependentRequired";
        if (dependency.is_array() && std::string_view(keyword) != "dependentSchemas") {
          std::vector<std::string> names;
          for (const auto& n : dependency) {
            if (!n.is_string())
              return fail(document, with(with(path, keyword), name), "a dependency must name properties");
            names.push_back(n.get<std::string>());
          }
          node.property_dependencies.emplace_back(name, std::move(names));
        } else if (names_expected) {
          return fail(document, with(with(path, keyword), name), "a dependency must name properties");
        } else {
          const schema_node* sub = load(dependency, document, with(with(path, keyword), name));
          if (sub == nullptr) return false;
          node.schema_dependencies.emplace_back(name, sub);
        }
      }
    }
    return true;
  }

  bool load_array(schema_node& node, const json& value, std::size_t document, const std::vector<std::string>& path) {
    // 2020-12's prefixItems are draft 7's items array, and its items then stand for additionalItems (so does a
    // boolean items in 2019-09 and 2020-12, as Confluent translates it).
    const json* items_value = member(value, "items");
    const bool prefixed = member(value, "prefixItems") != nullptr ||
                          (modern_[document] && items_value != nullptr && items_value->is_boolean());
    const char* list_keyword = prefixed ? "prefixItems" : "items";
    const char* rest_keyword = prefixed ? "items" : "additionalItems";
    if (const json* items = member(value, list_keyword); items != nullptr && (items->is_array() || prefixed)) {
      if (!items->is_array()) return fail(document, with(path, list_keyword), "prefixItems must be an array");
      node.item_schemas.emplace();
      for (std::size_t i = 0; i < items->size(); ++i) {
        const schema_node* sub = load((*items)[i], document, with(with(path, list_keyword), std::to_string(i)));
        if (sub == nullptr) return false;
        node.item_schemas->push_back(sub);
      }
    } else if (!prefixed && !child(node.all_items, value, "items", document, path)) {
      return false;
    }
    if (const json* additional = member(value, rest_keyword); additional != nullptr && additional->is_boolean()) {
      node.permits_additional_items = additional->get<bool>();
    } else if (!child(node.additional_items, value, rest_keyword, document, path)) {
      return false;
    }
    if (const json* unique = member(value, "uniqueItems")) {
      if (!unique->is_boolean()) return fail(document, with(path, "uniqueItems"), "uniqueItems must be a boolean");
      node.unique_items = unique->get<bool>();
    }
    const schema_node* ignored = nullptr;
    return count(node.max_items, value, "maxItems", document, path) &&
           count(node.min_items, value, "minItems", document, path) &&
           number(node.max_contains, value, "maxContains", document, path) &&
           number(node.min_contains, value, "minContains", document, path) &&
           child(ignored, value, "contains", document, path) &&
           child(node.unevaluated_items, value, "unevaluatedItems", document, path);
  }

  // The base a document's relative $refs resolve against: its $id, else the name it was registered under.
  std::string document_base(std::size_t document) const {
    const json& doc = *graph_.documents[document];
    if (doc.is_object()) {
      const json* id = member(doc, "$id") != nullptr ? member(doc, "$id") : member(doc, "id");
      if (id != nullptr && id->is_string()) return id->get<std::string>();
    }
    return document == 0 ? std::string() : resolve_uri(document_base(0), graph_.document_names[document]);
  }

  std::optional<std::size_t> find_document(std::string_view uri, std::size_t from) const {
    if (uri.empty()) return from;
    const std::string wanted = resolve_uri(document_base(from), uri);
    for (std::size_t d = 0; d < graph_.documents.size(); ++d) {
      if (d != 0 &&
          (graph_.document_names[d] == uri || resolve_uri(document_base(0), graph_.document_names[d]) == wanted))
        return d;
      if (document_base(d) == wanted) return d;
    }
    return std::nullopt;
  }

  bool resolve_reference(const pending_reference& ref) {
    const auto hash = ref.ref.find('#');
    const std::string_view uri = std::string_view(ref.ref).substr(0, hash);
    const std::string_view fragment =
        hash == std::string::npos ? std::string_view() : std::string_view(ref.ref).substr(hash + 1);
    const std::string unresolved = "$ref '" + ref.ref.substr(0, 100) + "' resolves nowhere";
    auto document = find_document(uri, ref.document);
    if (!document || (!fragment.empty() && fragment.front() != '/'))
      return fail(ref.document, with(ref.path, "$ref"), unresolved);
    auto tokens = pointer_tokens(fragment);
    if (!tokens) return fail(ref.document, with(ref.path, "$ref"), unresolved);
    const json* target = follow(*graph_.documents[*document], *tokens);
    // Confluent merges `definitions` into `$defs` before loading, so `#/$defs/x` also finds `#/definitions/x`.
    if (target == nullptr && !tokens->empty() && tokens->front() == "$defs") {
      tokens->front() = "definitions";
      target = follow(*graph_.documents[*document], *tokens);
    }
    if (target == nullptr) return fail(ref.document, with(ref.path, "$ref"), unresolved);
    ref.node->referred = load(*target, *document, *tokens);
    return ref.node->referred != nullptr;
  }

  // A chain made only of $refs that comes back on itself stands for no schema: refused, as everit fails on it.
  bool check_reference_cycles() {
    enum class state { walking, done };
    std::unordered_map<const schema_node*, state> seen;
    std::vector<const schema_node*> chain;
    for (const auto& node : graph_.nodes) {
      chain.clear();
      const schema_node* at = node.get();
      while (at->kind == node_kind::reference) {
        auto [it, fresh] = seen.emplace(at, state::walking);
        if (!fresh) {
          if (it->second == state::done) break;
          error_ = "$ref cycle through '" + member(*at->source, "$ref")->get<std::string>().substr(0, 100) + "'";
          return false;
        }
        chain.push_back(at);
        at = at->referred;
      }
      for (const schema_node* walked : chain) seen[walked] = state::done;
    }
    return true;
  }

  schema_graph& graph_;
  const schema::parse_limits& limits_;
  std::unordered_map<const json*, schema_node*> loaded_;
  std::vector<pending_reference> pending_;
  std::vector<bool> modern_;  // per document: written in draft 2019-09 or 2020-12
  std::string error_;
};

}  // namespace

const schema_node* resolve(const schema_node* node) {
  while (node != nullptr && node->kind == node_kind::reference) node = node->referred;
  return node;
}

schema::schema_result<std::unique_ptr<schema_graph>> load_schema(std::string_view text,
                                                                 const std::vector<schema::named_schema>& references,
                                                                 const schema::parse_limits& limits) {
  const std::size_t max_nesting = 2 * limits.max_depth;
  auto graph = std::make_unique<schema_graph>();
  auto root = parse_document(text, max_nesting, "the schema");
  if (!root) return root.error();
  if (!root.value().is_object() && !root.value().is_boolean())
    return schema::schema_error{"Invalid JSON schema: expected an object or a boolean at #"};
  graph->documents.push_back(std::make_unique<json>(std::move(root).value()));
  graph->document_names.emplace_back();
  for (const auto& reference : references) {
    auto doc = parse_document(reference.text, max_nesting, "reference '" + reference.name.substr(0, 100) + "'");
    if (!doc) return doc.error();
    graph->documents.push_back(std::make_unique<json>(std::move(doc).value()));
    graph->document_names.push_back(reference.name);
  }
  loader load(*graph, limits);
  graph->root = load.load_root();
  if (graph->root == nullptr) {
    // Property names and reference names come back in the message: keep it short.
    constexpr std::size_t max_message = 300;
    std::string message = load.error();
    if (message.size() > max_message) message = message.substr(0, max_message) + "...";
    return schema::schema_error{"Invalid JSON schema: " + message};
  }
  return graph;
}

}  // namespace ferry::json_schema
