#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "coord/cluster_view.h"

namespace ferry::balance {

// One partition's move: its new replicas (written as a KIP-455 reassignment; the controller completes it).
struct replica_move {
  std::string topic;
  partition_id partition{0};
  std::vector<broker_id> target;

  bool operator==(const replica_move&) const = default;
};

struct balance_limits {
  // Reassignments in flight at once across the cluster, counting those already running: when brokers come or
  // go the data moves a bounded amount at a time.
  std::size_t max_moves = 10;
  // Brokers to empty before they are removed; they receive nothing.
  std::set<broker_id> leaving;
};

// The next moves that bring the managed topics' replicas to an even spread over the live brokers that stay:
// first every replica on a leaving broker, then, while the most loaded broker holds two or more replicas more
// than the least loaded, one replica from the first to the second. A replacement keeps the partition's
// replica order (so a moved preferred leader's replacement becomes the preferred leader), never puts two
// replicas on one broker, and never lowers the number of racks a partition spans. Partitions being
// reassigned are left alone. Loads count every topic's replicas, managed or not; only managed topics move.
std::vector<replica_move> plan_balance(const coord::cluster_view& view, const std::set<std::string>& managed,
                                       const balance_limits& limits);

// Replicas each live broker holds (targets of reassignments in flight included).
std::map<broker_id, std::size_t> replica_loads(const coord::cluster_view& view);

}  // namespace ferry::balance
