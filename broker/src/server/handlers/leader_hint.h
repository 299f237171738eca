#pragma once

#include <algorithm>
#include <string_view>

#include "coord/cluster_view.h"
#include "model/ids.h"

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

}  // namespace ferry::server::handlers
