#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "base/result.h"
#include "config/topic_config.h"
#include "metrics/broker_metrics.h"
#include "model/ids.h"
#include "storage/log.h"

namespace ferry::replication {

// Someone waiting for new data in a partition: a long-polling fetch. notify() may be called from any
// thread and must not block.
class data_waiter {
 public:
  virtual ~data_waiter() = default;
  virtual void notify() = 0;
};

// A partition replica on this broker: its log, and its role in the partition's replication. Leadership
// comes from the partition state in ZooKeeper (leader broker and leader epoch); only the leader takes
// produce requests and serves consumers. Consumers read up to the high watermark; with one replica the
// high watermark is the log end offset, and followers will move it once replication lands.
//
// Thread-safety: append() serialises on an internal mutex; reads and offset queries run concurrently.
class partition {
 public:
  partition(topic_partition id, std::shared_ptr<storage::log> log, config::topic_settings settings,
            metrics::topic_metrics counters);

  [[nodiscard]] const topic_partition& id() const { return id_; }
  [[nodiscard]] storage::log& log() { return *log_; }
  [[nodiscard]] const metrics::topic_metrics& counters() const { return counters_; }

  // The topic's effective settings; replaced whole when its config changes.
  [[nodiscard]] std::shared_ptr<const config::topic_settings> settings() const { return settings_.load(); }
  void update_settings(config::topic_settings settings);

  void become_leader(leader_epoch epoch);
  void become_follower(leader_epoch epoch);
  [[nodiscard]] bool is_leader() const { return leader_.load(); }
  [[nodiscard]] leader_epoch epoch() const { return leader_epoch{epoch_.load()}; }

  // Appends one validated client batch with the current leader epoch, then wakes waiting fetches.
  // errc::not_leader when this replica does not lead.
  result<storage::append_result> append(std::span<std::byte> batch);

  // What a consumer may read: from `from`, up to the high watermark.
  result<storage::read_result> read(offset from, std::uint64_t max_bytes);

  [[nodiscard]] offset high_watermark() const { return offset{high_watermark_.load()}; }
  [[nodiscard]] offset log_start_offset() const { return log_->log_start_offset(); }
  [[nodiscard]] offset log_end_offset() const { return log_->log_end_offset(); }

  // Background upkeep, serialised with appends as the log requires.
  result<std::size_t> apply_retention();
  result<void> flush_by_time();

  // Registers a waiter until it is notified once (or expires: weak references are dropped).
  void wait_for_data(std::weak_ptr<data_waiter> waiter);

 private:
  void notify_waiters();

  topic_partition id_;
  std::shared_ptr<storage::log> log_;
  std::atomic<std::shared_ptr<const config::topic_settings>> settings_;
  metrics::topic_metrics counters_;
  std::mutex append_mutex_;
  std::atomic<bool> leader_{false};
  std::atomic<std::int32_t> epoch_{-1};
  std::atomic<std::int64_t> high_watermark_{0};
  std::mutex waiters_mutex_;
  std::vector<std::weak_ptr<data_waiter>> waiters_;
};

// The storage settings a topic's configuration implies.
[[nodiscard]] storage::log_config to_log_config(const config::topic_settings& settings);

}  // namespace ferry::replication
