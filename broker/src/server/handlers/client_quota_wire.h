#pragma once

// What DescribeClientQuotas and AlterClientQuotas share: entities on the wire, and quota refusals as Kafka codes.
#include <optional>
#include <string>

#include "protocol/error_code.h"
#include "quota/quota_entity.h"

namespace ferry::server::handlers {

inline protocol::error_code code_of(const quota::refusal& r) {
  return r.code == quota::errc::unsupported_entity_type ? protocol::error_code::unsupported_version
                                                        : protocol::error_code::invalid_request;
}

// An entity as the responses list it: its parts in Kafka's order, a null name for a default part.
template <typename EntityData>
std::vector<EntityData> entity_to_wire(const quota::quota_entity& entity) {
  std::vector<EntityData> out;
  const auto add = [&out](std::string_view type, const quota::entity_name& name) {
    out.push_back({std::string(type), name.is_default ? std::nullopt : std::optional(name.name)});
  };
  if (entity.user) add(quota::user_entity_type, *entity.user);
  if (entity.client_id) add(quota::client_id_entity_type, *entity.client_id);
  return out;
}

}  // namespace ferry::server::handlers
