#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "coord/cluster_observer.h"

namespace ferry::balance {

// Starts the operator's reassignments as `kafka-reassign-partitions --throttle` does: each moving partition's
// current replicas go on its topic's leader.replication.throttled.replicas, the new ones on
// follower.replication.throttled.replicas, and every live broker gets leader/follower.replication.throttled.rate
// of `bytes_per_second`. Once no reassignment is in flight, the lists and rates it wrote are removed again. A
// list or rate someone else set is never changed or removed (their throttle governs). Thread-safe; blocking
// ZooKeeper calls.
class throttled_moves {
 public:
  // 0 bytes per second: reassignments start without throttles.
  throttled_moves(coord::cluster_observer& cluster, std::uint64_t bytes_per_second)
      : cluster_(cluster), rate_(bytes_per_second) {}

  // Throttles, then writes the reassignment of `targets` (each partition's new replicas).
  result<void> start(const std::string& topic, const std::map<partition_id, std::vector<broker_id>>& targets);
  // Removes this process's throttles when the cluster has no reassignment in flight (called on cluster changes);
  // whether some are still in place (to look again later).
  bool release_when_idle();

 private:
  result<void> throttle_topic(const std::string& topic, const coord::topic_info& live,
                              const std::map<partition_id, std::vector<broker_id>>& targets);
  result<void> throttle_brokers(const coord::cluster_view& view);

  coord::cluster_observer& cluster_;
  const std::uint64_t rate_;
  std::mutex mutex_;  // one start or release at a time
  // The list values this process wrote, by topic and key (to recognise them when clearing).
  std::map<std::string, std::map<std::string, std::string>> written_lists_;
  std::set<broker_id> rated_brokers_;
  // The view can lag a moment behind a reassignment just written: no release that soon after a start.
  std::chrono::steady_clock::time_point last_start_{};
};

}  // namespace ferry::balance
