#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "schema/schema_format.h"

namespace ferry::avro {

// JSON values keep their members in text order, as Jackson's trees do: properties are written back in the order
// the client sent them.
using json = nlohmann::ordered_json;

enum class kind {
  null,
  boolean,
  int_,
  long_,
  float_,
  double_,
  bytes,
  string,
  record,
  enum_,
  array,
  map,
  union_,
  fixed
};

// Java's `Schema.Type` name in upper case, as SchemaCompatibility's messages print it ("INT", "RECORD").
std::string_view java_type_name(kind k);
// The Avro type name ("int", "record").
std::string_view avro_type_name(kind k);

struct node;

// A full name split as Java's `Schema.Name` keeps it: `space` is empty for the null namespace.
struct avro_name {
  std::string name;
  std::string space;
  [[nodiscard]] std::string full() const { return space.empty() ? name : space + "." + name; }
};

struct field {
  std::string name;
  node* type = nullptr;
  std::optional<std::string> doc;
  std::optional<json> default_value;
  std::string order = "ascending";
  std::vector<std::string> aliases;  // as written; Java compares them to writer field names verbatim
  json props = json::object();
};

// One type of a schema. Named types (record, enum, fixed) are one node however often they are referred to, so
// recursive schemas are cycles and the compatibility check can memoize pairs by node, as Java does by identity.
// Every other occurrence of a type is its own node.
struct node {
  kind type = kind::null;
  bool is_error = false;  // a record declared as "error"
  avro_name name;         // named types only
  std::optional<std::string> doc;
  std::vector<avro_name> aliases;  // named types; an alias's space defaults to the type's
  std::vector<field> fields;
  std::vector<std::string> symbols;
  std::optional<std::string> enum_default;
  std::int64_t size = 0;
  node* items = nullptr;  // array items, map values
  std::vector<node*> branches;
  json props = json::object();
  // A name used before its definition: Java 1.12 parses it as an empty record and resolves it at the end.
  std::optional<std::string> unresolved;

  [[nodiscard]] bool is_named() const { return type == kind::record || type == kind::enum_ || type == kind::fixed; }
  // Java's `getFullName()`: the type name for unnamed types, which is what makes unions' duplicates.
  [[nodiscard]] std::string full_name() const;
  // Java's `getAliases()`: full names, with an explicitly null-namespace alias of a namespaced type as ".name".
  [[nodiscard]] std::vector<std::string> alias_full_names() const;
};

// The nodes of one parse (the references' and the main schema's), owned together since they point at each other.
struct node_pool {
  std::vector<std::unique_ptr<node>> nodes;
  node* make(kind k) {
    nodes.push_back(std::make_unique<node>());
    nodes.back()->type = k;
    return nodes.back().get();
  }
};

// A parsed Avro schema. Immutable after parsing; safe to share between threads.
class avro_schema final : public schema::parsed_schema {
 public:
  avro_schema(std::shared_ptr<node_pool> pool, const node* root, std::vector<std::string> reference_names)
      : pool_(std::move(pool)), root_(root), reference_names_(std::move(reference_names)) {}

  [[nodiscard]] schema::schema_type type() const override { return schema::schema_type::avro; }
  // Java's `Schema.toString(referencedSchemas, false)` as Confluent's `AvroSchema.canonicalString()` calls it: the
  // compact layout of `Schema.toJson`, with the references' top-level types written by name only.
  [[nodiscard]] std::string canonical() const override;
  // The canonical layout with every name written in full (`"name":"com.acme.User"`, no `namespace` key, full names
  // in references and aliases), so that spellings differing only in namespace inheritance store once. This is a
  // simplification of Confluent's `AvroSchemaUtils.toNormalizedString`, which also reorders keys and properties.
  [[nodiscard]] std::string normalized() const override;
  // Java `SchemaCompatibility.checkReaderWriterCompatibility(this, previous)` (Avro 1.12): one line per
  // incompatibility, "<TYPE> at <location>: <message>".
  [[nodiscard]] std::vector<std::string> backward_incompatibilities(
      const schema::parsed_schema& previous) const override;

  [[nodiscard]] const node& root() const { return *root_; }

 private:
  std::shared_ptr<node_pool> pool_;
  const node* root_;
  std::vector<std::string> reference_names_;  // full names the canonical text writes by name only
};

// Parses `text` as Apache Avro 1.12's `Schema.Parser` does with its default settings (name and default-value
// validation on), after parsing each of `references` into the same name table, as Confluent's AvroSchema does.
schema::schema_result<schema::schema_ptr> parse(std::string_view text,
                                                const std::vector<schema::named_schema>& references,
                                                const schema::parse_limits& limits);

// The compatibility check on parsed roots, for callers (and tests) holding two `avro_schema`s.
std::vector<std::string> reader_writer_incompatibilities(const node& reader, const node& writer);

// The Java `Schema.toJson` layout; `known` holds the full names already written (or to write by name only).
std::string to_canonical_json(const node& root, std::vector<std::string> known, bool full_names);

}  // namespace ferry::avro
