#include "metrics/replication_metrics.h"

#include <algorithm>

namespace ferry::metrics {
namespace {

template <typename T>
T* single(prometheus::Registry& registry, const std::string& name, const std::string& help) {
  return &prometheus::detail::Builder<T>().Name(name).Help(help).Register(registry).Add({});
}

}  // namespace

replication_metrics::replication_metrics(prometheus::Registry& registry)
    : lag_family_(prometheus::BuildGauge()
                      .Name("ferry_partition_follower_lag_records")
                      .Help("Records a follower of a partition led here is behind the leader's log end")
                      .Register(registry)),
      lag_bytes_family_(
          prometheus::BuildGauge()
              .Name("ferry_partition_follower_lag_bytes")
              .Help("Bytes of batches a follower of a partition led here lacks up to the leader's log end")
              .Register(registry)),
      partitions_(single<prometheus::Gauge>(registry, "ferry_partitions", "Partition replicas on this broker")),
      leader_partitions_(single<prometheus::Gauge>(registry, "ferry_leader_partitions", "Partitions led here")),
      under_replicated_(single<prometheus::Gauge>(registry, "ferry_under_replicated_partitions",
                                                  "Partitions led here whose ISR is smaller than their replicas")),
      under_min_isr_(single<prometheus::Gauge>(registry, "ferry_under_min_isr_partitions",
                                               "Partitions led here whose ISR is smaller than min.insync.replicas")),
      isr_shrinks_(single<prometheus::Counter>(registry, "ferry_isr_shrinks_total",
                                               "ISR shrinks this broker wrote as a leader")),
      isr_expands_(single<prometheus::Counter>(registry, "ferry_isr_expands_total",
                                               "ISR expansions this broker wrote as a leader")),
      controller_active_(
          single<prometheus::Gauge>(registry, "ferry_controller_active", "1 while this broker is the controller")),
      offline_(single<prometheus::Gauge>(registry, "ferry_offline_partitions",
                                         "On the controller: partitions without a live leader")),
      elections_(
          single<prometheus::Counter>(registry, "ferry_leader_elections_total",
                                      "Leaders this broker elected as the controller for partitions that had a state")),
      unclean_elections_(single<prometheus::Counter>(registry, "ferry_unclean_leader_elections_total",
                                                     "Of those, leaders elected from outside the ISR")),
      acks_all_waiting_(
          single<prometheus::Gauge>(registry, "ferry_produce_requests_waiting_for_replicas",
                                    "Produce requests with acks=all waiting until the ISR has their batches")) {
  auto& bytes = prometheus::BuildCounter()
                    .Name("ferry_replication_throttled_bytes_total")
                    .Help(
                        "Bytes replicated for throttled replicas (*.replication.throttled.replicas), by side: "
                        "served as a leader, fetched as a follower")
                    .Register(registry);
  auto& skips = prometheus::BuildCounter()
                    .Name("ferry_replication_throttled_skips_total")
                    .Help(
                        "Times a throttled replica was left out of a fetch (follower side) or of a fetch "
                        "response (leader side) because that side's *.replication.throttled.rate was exceeded")
                    .Register(registry);
  leader_throttle_ = {&bytes.Add({{"side", "leader"}}), &skips.Add({{"side", "leader"}})};
  follower_throttle_ = {&bytes.Add({{"side", "follower"}}), &skips.Add({{"side", "follower"}})};
}

void replication_metrics::set_follower_lags(const std::vector<follower_lag>& lags) {
  std::lock_guard lock(lags_mutex_);
  // Sets one family's series and removes those of its last set that are gone.
  const auto replace = [&](prometheus::Family<prometheus::Gauge>& family, std::vector<prometheus::Gauge*>& last,
                           auto value) {
    std::vector<prometheus::Gauge*> now;
    now.reserve(lags.size());
    for (const auto& l : lags) {
      auto& gauge = family.Add(
          {{"topic", l.topic}, {"partition", std::to_string(l.partition)}, {"follower", std::to_string(l.follower)}});
      gauge.Set(static_cast<double>(value(l)));
      now.push_back(&gauge);
    }
    std::sort(now.begin(), now.end());
    for (auto* old : last)
      if (!std::binary_search(now.begin(), now.end(), old)) family.Remove(old);
    last = std::move(now);
  };
  replace(lag_family_, lags_, [](const follower_lag& l) { return l.records; });
  replace(lag_bytes_family_, lag_bytes_, [](const follower_lag& l) { return l.bytes; });
}

}  // namespace ferry::metrics
