#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "registry/registry_reply.h"
#include "registry/schema_store.h"
#include "schema/schema_format.h"

namespace ferry::registry {

// A record for `_schemas` (schema_records.h).
struct topic_record {
  std::string key;
  std::optional<std::string> value;  // nullopt: a tombstone
};

// What a write request turns into, decided against the writer's up-to-date store: the records to append and the
// answer once they are in (an empty list when there is nothing to write, such as a schema registered again).
struct write_plan {
  std::vector<topic_record> records;
  registry_reply reply;
};

// Whether the request is one of the writes: POST /subjects/{s}/versions, DELETE /subjects/{s}[/versions/{v}],
// PUT and DELETE on /config[/{s}] and /mode[/{s}].
bool is_write(const std::string& method, const request_target& target);

// Plans a write request against `store`; an error reply when it is refused (with Confluent's codes).
std::variant<write_plan, registry_reply> plan_write(const schema_store& store, const registry_request& request,
                                                    const request_target& target, const schema::parse_limits& limits);

}  // namespace ferry::registry
