#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json_schema/schema_model.h"
#include "schema/schema_format.h"

namespace ferry::json_schema {

// A schema document and the documents it refers to, loaded into the model Confluent's diff compares (the everit
// library's: one node per schema, several keyword families in one object become a synthetic allOf, a type array
// an anyOf). Owns the documents and the nodes; nodes point into both, so the graph never moves once loaded.
struct schema_graph {
  std::vector<std::unique_ptr<json>> documents;  // [0] is the schema itself, then its references
  std::vector<std::string> document_names;       // "" for the schema itself, else the reference's name
  std::vector<std::unique_ptr<schema_node>> nodes;
  const schema_node* root = nullptr;
};

// Parses `text` and its references and loads the schema: every keyword the compatibility rules read is checked for
// its type, and every `$ref` reached from the schema must resolve (a local JSON pointer, `#/$defs/x` also finding
// `#/definitions/x` as Confluent bridges them, or a reference by name, optionally followed by a pointer into it).
// JSON nesting is bounded by twice `limits.max_depth` (a level of subschemas, `"properties": {"a": {...}}`, is two),
// the number of schemas by `limits.max_elements`.
schema::schema_result<std::unique_ptr<schema_graph>> load_schema(std::string_view text,
                                                                 const std::vector<schema::named_schema>& references,
                                                                 const schema::parse_limits& limits);

// The schema a node stands for once `$ref`s are followed (the loader refuses cycles made only of `$ref`s).
const schema_node* resolve(const schema_node* node);

}  // namespace ferry::json_schema
