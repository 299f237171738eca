#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/outcome/std_result.hpp>

namespace ferry::schema {

// The kinds of schema the registry keeps, with the names Confluent's REST API gives them (`schemaType`).
enum class schema_type { avro, json, protobuf };

std::string_view type_name(schema_type type);
std::optional<schema_type> parse_type(std::string_view name);

// Why a schema text was refused: the message goes back to the client in a 42201 body, so it names the place in
// the schema (a field, a type name) and never echoes more than a short excerpt of the text.
struct schema_error {
  std::string message;
};

template <typename T>
using schema_result = boost::outcome_v2::std_result<T, schema_error, boost::outcome_v2::policy::terminate>;

// A schema another one refers to (Confluent's `references`): `name` is how the referring schema names it (an
// Avro full type name, a JSON Schema `$ref` URL, a Protobuf import path) and `text` the referenced version's
// schema as the registry keeps it. The registry resolves references transitively and passes them in dependency
// order (a schema after every schema it refers to), so a parser never fetches anything.
struct named_schema {
  std::string name;
  std::string text;
};

// Bounds every parser honours so that no schema a client sends can exhaust the stack or memory.
struct parse_limits {
  std::size_t max_depth = 64;         // nesting of types (records in records, arrays of arrays, JSON objects...)
  std::size_t max_elements = 100000;  // named types, fields, properties, messages... in the schema and its references
};

// A parsed schema of one of the formats. Immutable; shared between subjects and versions.
class parsed_schema {
 public:
  virtual ~parsed_schema() = default;
  [[nodiscard]] virtual schema_type type() const = 0;
  // The text the registry stores and returns, and compares to find an identical schema: the schema in the
  // format's canonical layout (for Avro and JSON Schema, compact JSON as Confluent's registry writes it), so that
  // texts differing only in layout register once.
  [[nodiscard]] virtual std::string canonical() const = 0;
  // The text stored with `normalize=true`: `canonical()` with equivalent spellings made one (Avro: full names,
  // Protobuf: Confluent's normalized .proto, JSON Schema: keys sorted).
  [[nodiscard]] virtual std::string normalized() const = 0;
  // Why this schema, as a new version of a subject, cannot follow `previous` under BACKWARD compatibility
  // (Confluent's `isBackwardCompatible(previous)`: for Avro, this schema reading data written with `previous`;
  // for Protobuf and JSON Schema, the documented diff rules from `previous` to this). Empty when compatible.
  // FORWARD is `previous.backward_incompatibilities(*this)`; `previous` is always of the same type.
  [[nodiscard]] virtual std::vector<std::string> backward_incompatibilities(const parsed_schema& previous) const = 0;
};

using schema_ptr = std::shared_ptr<const parsed_schema>;

// Each format's library (`avro/`, `json_schema/`, `proto_schema/`) offers one entry point of this shape:
//   schema_result<schema_ptr> parse(std::string_view text, const std::vector<named_schema>& references,
//                                   const parse_limits& limits);
// and the registry picks one by `schema_type`.

}  // namespace ferry::schema
