#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "coord/cluster_view.h"
#include "coord/layout.h"
#include "model/ids.h"

namespace ferry::coord {

// Partition reassignment as Kafka's ZooKeeper-mode controller does it (KIP-455). Whoever asks (a broker
// handling AlterPartitionReassignments, or the operator) rewrites the topic znode so that a moving partition's
// replicas are the target replicas followed by the original ones that are not targets, with the new targets in
// `adding_replicas` and the originals that go in `removing_replicas`. The new replicas fetch from the leader
// and join the ISR once caught up (the leader's ordinary ISR expansion); when every target is in the ISR, the
// controller completes the move in one multi-op: the partition state without the removed replicas (a new
// leader among the targets if the old one goes) and the topic znode with only the targets. Brokers that are no
// longer assigned delete their replica's log.

// One partition's replicas, and what of them is moving.
struct partition_assignment {
  std::vector<broker_id> replicas;
  std::vector<broker_id> adding;
  std::vector<broker_id> removing;

  bool operator==(const partition_assignment&) const = default;
};

// The assignment that moves a partition to `target` (non-empty, distinct ids). The original replicas are the
// current ones without those still being added, so a new target replaces a reassignment in progress instead
// of stacking on it. A target equal to the original replicas ends the reassignment (a cancel).
[[nodiscard]] partition_assignment reassign_to(const partition_assignment& current,
                                               const std::vector<broker_id>& target);
// The original replicas of a partition being reassigned (its replicas without the ones being added).
[[nodiscard]] std::vector<broker_id> original_replicas(const partition_assignment& current);

// Partitions being reassigned across the cluster (what the operator's move budget counts).
[[nodiscard]] std::size_t reassignments_in_flight(const cluster_view& view);

// A partition's assignment in a topic znode's terms.
[[nodiscard]] partition_assignment assignment_of(const layout::topic_assignment& topic, partition_id p);
void set_assignment(layout::topic_assignment& topic, partition_id p, partition_assignment assignment);

// The state that completes a partition's reassignment, or nullopt while a target replica is not in sync
// (missing from the ISR, not live, or registered again since the state was written): the ISR keeps only
// targets, and the leader stays if it is a target, else the first target in sync that can lead takes over
// with a new leader epoch.
[[nodiscard]] std::optional<layout::leader_and_isr> completed_state(const cluster_view& view,
                                                                    const partition_info& partition,
                                                                    std::int32_t controller_epoch);

}  // namespace ferry::coord
