#pragma once

// The config resources of DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, and who may touch them.
#include <cstdint>
#include <optional>
#include <string_view>

#include "protocol/error_code.h"
#include "server/authorization.h"

namespace ferry::server::handlers {

// Kafka's ConfigResource.Type codes.
inline constexpr std::int8_t topic_resource = 2;
inline constexpr std::int8_t broker_resource = 4;

// Kafka's rule: a topic's configs need `op` (DescribeConfigs or AlterConfigs) on the topic, a broker's on the
// cluster. The error that refuses the resource, or nullopt when it is allowed.
inline std::optional<protocol::error_code> config_refusal(request_context& ctx, std::int8_t resource_type,
                                                          std::string_view name, authz::operation op) {
  if (resource_type == topic_resource)
    return authorize(ctx, op, authz::resource_type::topic, name)
               ? std::nullopt
               : std::optional(protocol::error_code::topic_authorization_failed);
  return authorize_cluster(ctx, op) ? std::nullopt : std::optional(protocol::error_code::cluster_authorization_failed);
}

}  // namespace ferry::server::handlers
