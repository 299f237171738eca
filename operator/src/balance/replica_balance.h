#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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
  // Whether replicas are moved to even out the brokers (false: only leaving brokers are emptied).
  bool spread = true;
};

struct balance_plan {
  std::vector<replica_move> moves;
  // Partitions with a replica on a leaving broker that no staying broker can take (too few brokers stay, or
  // every candidate already holds a replica of it): "topic-partition".
  std::vector<std::string> undrainable;
};

// The next moves that bring the managed topics' replicas to an even spread over the live brokers that stay:
// first every replica on a leaving broker (of every topic: a broker must be empty before it goes), then, while the most
// loaded broker holds two or more replicas more than the least loaded, one replica from the first to the second. A
// replacement keeps the partition's replica order (so a moved preferred leader's replacement becomes the preferred
// leader), never puts two replicas on one broker, and never lowers the number of racks a partition spans (unless a
// leaving broker's rack goes with it). Partitions being reassigned are left alone. Loads count every topic's replicas,
// managed or not; only managed topics are spread.
balance_plan plan_balance(const coord::cluster_view& view, const std::set<std::string>& managed,
                          const balance_limits& limits);

// Replicas each live broker holds (targets of reassignments in flight included).
std::map<broker_id, std::size_t> replica_loads(const coord::cluster_view& view);

// One more than the highest broker id holding or receiving a replica (counting `moves` as started): with
// broker i in pod i, the fewest pods that keep every replica. 0 when no partition has a replica.
std::int32_t replica_floor(const coord::cluster_view& view, const std::vector<replica_move>& moves);

}  // namespace ferry::balance
