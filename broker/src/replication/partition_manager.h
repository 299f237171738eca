#pragma once

#include <atomic>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"
#include "coord/cluster_view.h"
#include "metrics/broker_metrics.h"
#include "replication/isr_writer.h"
#include "replication/partition.h"
#include "storage/log_manager.h"

namespace ferry::replication {

// The partitions this broker hosts, kept in line with the cluster view: a replica assigned here gets its log
// opened (or created), becomes leader or follower as its partition state says, and follows its topic's
// config overrides.
//
// Data is deleted only on an explicit signal: a topic seen marked for deletion (/admin/delete_topics) that
// then disappears, or a readable assignment that no longer lists this broker for the partition. A log that
// no assignment names for any other reason (a topic znode removed by hand, a cluster view that lacks it at
// startup, a log of an older topic of the same name) is set aside as "-stray" and kept; a topic whose znode
// cannot be read keeps its local partitions, leading none of them.
//
// Thread-safety: reconcile() runs on the registry's listener thread; lookups run on network threads
// concurrently (shared lock); background work (retention, flush) on a timer thread.
class partition_manager {
 public:
  partition_manager(storage::log_manager& logs, const config::broker_config& config, metrics::broker_metrics& metrics);

  void reconcile(const coord::cluster_view& view);
  // The topics marked for deletion in `view` that this broker is a replica of and holds no log of any more:
  // what it acknowledges to the controller (cluster_registry::acknowledge_deletion).
  [[nodiscard]] std::vector<std::string> deletions_done(const coord::cluster_view& view) const;
  // True once the last view reconciled lists this broker as live: until then a restarted broker may be named
  // leader of partitions it does not serve yet (readiness waits for this).
  [[nodiscard]] bool in_line_with_a_live_view() const { return in_line_with_live_view_.load(); }

  // The local leader replica of a partition: errc::unknown_partition if it is not hosted here, errc::not_leader
  // if this broker only follows it.
  [[nodiscard]] result<std::shared_ptr<partition>> leader_for(const topic_partition& tp) const;
  // The local replica of a partition, leader or follower: errc::unknown_partition if it is not hosted here.
  [[nodiscard]] result<std::shared_ptr<partition>> replica_for(const topic_partition& tp) const;
  [[nodiscard]] std::vector<std::shared_ptr<partition>> all() const;

  // DescribeLogDirs: each log dir (log.dirs order) and the partitions hosted in it.
  struct hosted_log {
    topic_partition id;
    std::int64_t size_bytes = 0;
    std::int64_t offset_lag = 0;  // how far the high watermark is past this replica's log end
  };
  struct log_dir_usage {
    std::string path;
    bool offline = false;
    std::optional<std::uint64_t> free_bytes;  // nullopt until measured
    std::vector<hosted_log> logs;
  };
  [[nodiscard]] std::vector<log_dir_usage> log_dir_usages() const;

  // Why no log dir here can take a new partition (all of them full or offline); nullopt when one can.
  [[nodiscard]] std::optional<std::string> storage_problem() const;

  // Background duties.
  void apply_retention();
  void flush_by_time();
  // producer.id.expiration.ms over every hosted log.
  void expire_producers();
  // Writes the ISR changes the partitions led here want (partition::wanted_isr_change), with
  // replica.lag.time.max.ms as the lag limit.
  void update_isrs(isr_writer& writer, std::int64_t now_ms);
  // Writes the high watermark and recovery point checkpoints (offset_checkpoint.h).
  void checkpoint();
  void refresh_metrics();
  // Flushes and closes every log (clean shutdown).
  result<void> close_all();

 private:
  std::shared_ptr<partition> open(const topic_partition& tp, const config::topic_settings& settings,
                                  const std::string& topic_id);
  // Deletes or sets aside a log no assignment hosts here (see the class comment); `hosted` is its partition, if
  // it had one.
  void retire(const topic_partition& tp, const coord::cluster_view& view, const std::shared_ptr<partition>& hosted);

  storage::log_manager& logs_;
  const config::broker_config& config_;
  metrics::broker_metrics& metrics_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<topic_partition, std::shared_ptr<partition>> partitions_;
  // Topics seen marked for deletion (reconcile's thread only).
  std::set<std::string, std::less<>> doomed_topics_;
  std::atomic<bool> in_line_with_live_view_{false};
  // The high watermarks of the last run, for partitions opened after a restart.
  const storage::offset_map checkpointed_high_watermarks_;
};

}  // namespace ferry::replication
