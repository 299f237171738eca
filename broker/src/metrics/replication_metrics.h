#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ferry::metrics {

// Where one follower of a partition led here is: records and bytes behind the leader's log end.
struct follower_lag {
  std::string topic;
  std::int32_t partition = 0;
  std::int32_t follower = 0;
  std::int64_t records = 0;
  std::uint64_t bytes = 0;
};

// The replication metrics (docs/metrics.md): this broker's partitions and leaderships and how healthy their
// ISRs are, ISR changes, and the controller's view of the cluster. The gauges are set on each scrape from the
// partitions and the cluster view; the counters count as things happen. Thread-safe.
// One side of replication throttling (leader or follower): replicated bytes of throttled replicas, and the
// times one was left out because the side's rate was exceeded.
struct throttle_counters {
  prometheus::Counter* bytes = nullptr;
  prometheus::Counter* skips = nullptr;
};

class replication_metrics {
 public:
  explicit replication_metrics(prometheus::Registry& registry);

  prometheus::Gauge& partitions() { return *partitions_; }
  prometheus::Gauge& leader_partitions() { return *leader_partitions_; }
  prometheus::Gauge& under_replicated_partitions() { return *under_replicated_; }
  prometheus::Gauge& under_min_isr_partitions() { return *under_min_isr_; }
  prometheus::Counter& isr_shrinks() { return *isr_shrinks_; }
  prometheus::Counter& isr_expands() { return *isr_expands_; }
  // The controller's: 1 on the one broker that is controller, and what it counts (0 elsewhere).
  prometheus::Gauge& controller_active() { return *controller_active_; }
  prometheus::Gauge& offline_partitions() { return *offline_; }
  // Kafka's are the controller's since its start; these count what this broker's controller wrote, so the
  // cluster's total is their sum over brokers.
  prometheus::Counter& leader_elections() { return *elections_; }
  prometheus::Counter& unclean_leader_elections() { return *unclean_elections_; }
  // Produce requests with acks=all waiting until the ISR has their batches (one per request).
  prometheus::Gauge& produce_requests_waiting_for_replicas() { return *acks_all_waiting_; }
  [[nodiscard]] throttle_counters leader_throttle() const { return leader_throttle_; }
  [[nodiscard]] throttle_counters follower_throttle() const { return follower_throttle_; }
  // Replaces every follower lag series with these (the partitions led here now).
  void set_follower_lags(const std::vector<follower_lag>& lags);

 private:
  prometheus::Family<prometheus::Gauge>& lag_family_;
  prometheus::Family<prometheus::Gauge>& lag_bytes_family_;
  prometheus::Gauge* partitions_;
  prometheus::Gauge* leader_partitions_;
  prometheus::Gauge* under_replicated_;
  prometheus::Gauge* under_min_isr_;
  prometheus::Counter* isr_shrinks_;
  prometheus::Counter* isr_expands_;
  prometheus::Gauge* controller_active_;
  prometheus::Gauge* offline_;
  prometheus::Counter* elections_;
  prometheus::Counter* unclean_elections_;
  prometheus::Gauge* acks_all_waiting_;
  throttle_counters leader_throttle_;
  throttle_counters follower_throttle_;
  std::mutex lags_mutex_;
  std::vector<prometheus::Gauge*> lags_;       // guarded by lags_mutex_: the series set last time
  std::vector<prometheus::Gauge*> lag_bytes_;  // guarded by lags_mutex_
};

}  // namespace ferry::metrics
