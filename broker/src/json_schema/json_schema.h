#pragma once

#include <string_view>
#include <vector>

#include "schema/schema_format.h"

namespace ferry::json_schema {

// Parses a JSON Schema as Confluent's registry accepts it (schemaType JSON). `references` are the schemas named by
// `$ref` URLs (Confluent's `references`, `name` being the URL as the schema writes it, e.g. "address.json").
//
// Refused: text that is not JSON, a root that is neither an object nor a boolean, a keyword the compatibility
// rules read with a value of the wrong type (a message names its JSON pointer), a `$ref` that resolves nowhere or
// only to `$ref`s in a cycle, JSON nested deeper than 2 × `limits.max_depth` (one level of subschemas is two JSON
// levels), more than `limits.max_elements` schemas,
// a number out of double range (nlohmann's parser refuses it).
//
// The parsed schema's texts:
// - canonical(): Confluent's `canonicalString()`, the JSON written compactly by Jackson with keys in the order the
//   client sent them (a repeated key keeps its first place and its last value). Floating-point numbers are written
//   in their shortest round-trip form (Confluent keeps the literal as a BigDecimal: "1.50" stays "1.50" there).
// - normalized(): Confluent's `normalize()`, the same JSON with every object's keys sorted.
//
// Schemas are read into the model Confluent's diff works on: everit's for drafts 4 to 7, and for 2019-09 and 2020-12
// the same model with Confluent's translation of the newer keywords (prefixItems, dependentRequired,
// dependentSchemas, unevaluated*, keywords beside a $ref applied as an allOf). patternProperties are matched with
// RE2, so a pattern RE2 cannot compile (lookaround, backreferences) matches no property name.
//
// backward_incompatibilities(previous) runs Confluent's `SchemaDiff.compare(previous, this)` and returns each
// difference not in its STRICT set of compatible changes, as "<TYPE> at <JSON path>", e.g.
// "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL at #/properties/age".
schema::schema_result<schema::schema_ptr> parse(std::string_view text,
                                                const std::vector<schema::named_schema>& references,
                                                const schema::parse_limits& limits);

}  // namespace ferry::json_schema
