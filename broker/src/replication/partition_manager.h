#pragma once

#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"
#include "coord/cluster_view.h"
#include "metrics/broker_metrics.h"
#include "replication/partition.h"
#include "storage/log_manager.h"

namespace ferry::replication {

// The partitions this broker hosts, kept in line with the cluster view: a replica assigned here gets its log
// opened (or created), becomes leader or follower as its partition state says, and follows its topic's
// config overrides; a replica no longer assigned here (its topic deleted) is closed and its log deleted.
//
// Thread-safety: reconcile() runs on the registry's listener thread; lookups run on network threads
// concurrently (shared lock); background work (retention, flush) on a timer thread.
class partition_manager {
 public:
  partition_manager(storage::log_manager& logs, const config::broker_config& config, metrics::broker_metrics& metrics);

  void reconcile(const coord::cluster_view& view);

  // The local leader replica of a partition: errc::unknown_partition if it is not hosted here, errc::not_leader
  // if this broker only follows it.
  [[nodiscard]] result<std::shared_ptr<partition>> leader_for(const topic_partition& tp) const;
  [[nodiscard]] std::vector<std::shared_ptr<partition>> all() const;

  // Background duties.
  void apply_retention();
  void flush_by_time();
  void refresh_metrics();
  // Flushes and closes every log (clean shutdown).
  result<void> close_all();

 private:
  std::shared_ptr<partition> open(const topic_partition& tp, const config::topic_settings& settings);
  void drop(const topic_partition& tp);

  storage::log_manager& logs_;
  const config::broker_config& config_;
  metrics::broker_metrics& metrics_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<topic_partition, std::shared_ptr<partition>> partitions_;
};

}  // namespace ferry::replication
