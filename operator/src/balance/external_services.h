#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace ferry::balance {

// The chart's per-broker external Services (<statefulset>-<i>-external) outlive a scale-in on purpose: under
// GitOps (helm template, Argo CD, Flux) the chart renders only the brokers asked for, and pruning a leaving
// broker's Service while it still leads partitions would cut its external clients off mid-drain. So GitOps
// tools are told not to prune them, and the operator deletes them once the StatefulSet no longer runs their
// broker.
inline constexpr std::string_view external_for_label = "ferry.dev/external-for";      // the StatefulSet's name
inline constexpr std::string_view broker_ordinal_label = "ferry.dev/broker-ordinal";  // the broker's pod ordinal

// Of a ServiceList, the names of the Services of `statefulset`'s brokers at ordinals >= replicas. Services
// without both labels, or with an ordinal that is not a number, are never chosen.
std::vector<std::string> external_services_to_prune(const nlohmann::json& services, std::string_view statefulset,
                                                    std::int32_t replicas);

// Deletes the external Services of brokers at ordinals >= replicas in `ns` (one already gone counts as deleted).
// False, with a log line saying why, when one may be left.
bool prune_external_services(kube::api_client& api, const std::string& ns, const std::string& statefulset,
                             std::int32_t replicas);

}  // namespace ferry::balance
