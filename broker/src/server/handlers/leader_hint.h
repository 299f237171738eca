#pragma once

#include <algorithm>
#include <string_view>

#include "coord/cluster_view.h"
#include "model/ids.h"
#include "protocol/error_code.h"

namespace ferry::server::handlers {

// Tells a client with stale leadership where a partition is led now (KIP-951, Fetch v12+ and Produce v10+):
// the leader and epoch in the partition's answer, and the leader's address on the client's listener once per
// response, so the client need not refresh its metadata first. Versions without the fields drop them.
template <typename PartitionAnswer, typename Response>
void point_to_leader(const coord::cluster_view& view, std::string_view listener, broker_id leader, leader_epoch epoch,
                     PartitionAnswer& out, Response& response) {
  out.current_leader = {leader, epoch};
  const auto b = view.brokers.find(leader);
  if (b == view.brokers.end()) return;
  const auto* address = b->second.endpoint_of(listener);
  if (address == nullptr) return;
  const bool listed = std::any_of(response.node_endpoints.begin(), response.node_endpoints.end(),
                                  [leader](const auto& e) { return e.node_id == leader; });
  if (!listed) response.node_endpoints.push_back({leader, address->host, address->port, b->second.rack});
}

// The answer for a partition this broker does not lead: NOT_LEADER_OR_FOLLOWER when the cluster knows it (the client
// refreshes its metadata and goes to the leader), UNKNOWN_TOPIC_OR_PARTITION when it does not, as Kafka answers.
[[nodiscard]] inline protocol::error_code not_led_here(const coord::cluster_view& view, const topic_partition& tp) {
  return view.find_partition(tp) != nullptr ? protocol::error_code::not_leader_or_follower
                                            : protocol::error_code::unknown_topic_or_partition;
}

}  // namespace ferry::server::handlers
