#pragma once

#include <optional>

#include "registry/registry_reply.h"
#include "registry/schema_store.h"
#include "schema/schema_format.h"

namespace ferry::registry {

// Answers a request that only reads the registry, from this broker's own copy: GET on /subjects, /schemas,
// /config, /mode and /contexts, and the lookups that POST a schema without writing (POST /subjects/{s},
// POST /compatibility/...). nullopt for a request that writes (the writer answers it) and for an unknown path.
std::optional<registry_reply> read_route(const schema_store& store, const registry_request& request,
                                         const request_target& target, const schema::parse_limits& limits);

}  // namespace ferry::registry
