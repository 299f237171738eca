#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "registry/schema_store.h"
#include "schema/schema_format.h"

namespace ferry::registry {

// Why a schema's references could not be resolved, or why it does not parse (both 42201 for the client).
struct resolution_error {
  std::string message;
};

// Parses a schema of `type` with its references, each resolved to the text of the subject version it names and,
// transitively, to theirs (dependency order, each once). A reference to a missing or permanently deleted version,
// a cycle, or a chain deeper than the parse limits' depth is an error.
schema::schema_result<schema::schema_ptr> parse_with_references(const schema_store& store, schema::schema_type type,
                                                                const std::string& text,
                                                                const std::vector<schema_reference>& references,
                                                                const schema::parse_limits& limits);

// A stored schema, parsed (with its references); the registry keeps no parsed copies yet, so every compatibility
// check parses the versions it compares.
schema::schema_result<schema::schema_ptr> parse_stored(const schema_store& store, const stored_schema& stored,
                                                       const schema::parse_limits& limits);

}  // namespace ferry::registry
