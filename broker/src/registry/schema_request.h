#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "registry/registry_reply.h"
#include "registry/schema_store.h"
#include "schema/schema_format.h"

namespace ferry::registry {

// The body of a register, lookup or compatibility request: {"schema", "schemaType", "references", "id",
// "version"} (the last two only in IMPORT mode).
struct schema_request {
  std::string schema;
  schema::schema_type type = schema::schema_type::avro;
  std::vector<schema_reference> references;
  std::optional<std::int32_t> id;
  std::optional<std::int32_t> version;
};
std::variant<schema_request, registry_reply> parse_schema_request(const std::string& body);

// A schema a client sent, parsed with its references, and the text the registry stores for it (canonical, or
// normalized with ?normalize=true).
struct candidate {
  schema::schema_ptr parsed;
  std::string text;
};
std::variant<candidate, registry_reply> make_candidate(const schema_store& store, const schema_request& request,
                                                       bool normalize, const schema::parse_limits& limits);

// A version in a path: an int >= 1, "latest" or -1. `latest` resolves to the newest version (soft-deleted ones
// too when `include_deleted`).
std::variant<const subject_version*, registry_reply> find_version(const schema_store& store, const std::string& subject,
                                                                  const std::string& version, bool include_deleted);

// The subject's compatibility level (its own, else the global one, else BACKWARD) and its mode likewise.
std::string effective_compatibility(const schema_store& store, const std::string& subject);
std::string effective_mode(const schema_store& store, const std::string& subject);

// 42208 for a subject name Confluent refuses (empty, or with control characters).
std::optional<registry_reply> check_subject(const std::string& subject);

// The checks the subject's level requires of `proposed`, against the versions that are not soft-deleted.
std::vector<std::string> check_against_subject(const schema_store& store, const std::string& subject,
                                               const schema::parsed_schema& proposed,
                                               const schema::parse_limits& limits);

// {subject, version, id, [schemaType], [references], schema}: how a subject version is shown.
nlohmann::json version_json(const std::string& subject, const subject_version& version, const stored_schema& schema);
nlohmann::json references_json(const std::vector<schema_reference>& references);

}  // namespace ferry::registry
