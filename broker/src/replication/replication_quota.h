#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>

#include "base/clock.h"
#include "metrics/replication_metrics.h"

namespace ferry::replication {

// A replication throttle: the byte rate of one side of replication (leader.replication.throttled.rate or
// follower.replication.throttled.rate) for the partitions a topic names in its *.replication.throttled.replicas
// config, as Kafka's ReplicationQuotaManager measures it. The rate is the bytes recorded over the last 11
// one-second windows divided by the time they span, counted as at least 10 seconds, so a throttled copy may
// start with about ten seconds' worth of bytes and then goes no faster than the limit.
//
// Callers ask admits() before they replicate a throttled replica that is out of the ISR and leave it out if not,
// and record() the bytes they replicated for every throttled replica, in the ISR or not (as Kafka does); both
// count in the side's metrics. Thread-safe: fetches on every network thread share the leader side's quota, and
// every fetcher thread the follower side's.
class replication_quota {
 public:
  static constexpr int windows = 11;
  static constexpr std::int64_t window_ms = 1000;

  explicit replication_quota(const clock& clock, metrics::throttle_counters counters = {})
      : clock_(clock), counters_(counters) {}

  // nullopt: no limit (the default; nothing is throttled whatever the topics say).
  void set_limit(std::optional<std::int64_t> bytes_per_second);
  // False (and counted as a skip) while the rate is over the limit.
  [[nodiscard]] bool admits();
  void record(std::uint64_t bytes);

 private:
  struct window {
    std::int64_t start_ms = 0;
    std::uint64_t bytes = 0;
  };
  [[nodiscard]] double rate_locked(std::int64_t now_ms) const;

  const clock& clock_;
  const metrics::throttle_counters counters_;
  mutable std::mutex mutex_;
  std::optional<std::int64_t> limit_;      // guarded by mutex_
  std::array<window, windows> windows_{};  // guarded by mutex_; windows_[i] covers one second, by start time
};

}  // namespace ferry::replication
