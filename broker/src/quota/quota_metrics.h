#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "quota/client_quotas.h"

namespace ferry::quota {

// The client quota sensors as Prometheus series, one per budget (Kafka's per-entity Produce, Fetch and Request
// metrics), labelled with the budget's tags as Kafka tags its sensors: `user` and `client_id` of the quota entity
// that applies, empty where the entity does not name one (so every client under a user's quota shares one series).
// Read at scrape time from client_quotas::totals(); a budget idle for an hour is dropped with its sensor, and no
// series exists while no quota is set.
//
// - ferry_client_quota_bytes_total{kind="produce"|"fetch"}: bytes counted against the budget (a throttled fetch's
//   bytes, which were never sent, are taken back);
// - ferry_client_quota_request_time_seconds_total{kind="request"}: request thread time counted;
// - ferry_client_quota_partition_mutations_total{kind="controller_mutation"}: partitions created or deleted;
// - ferry_client_quota_throttle_time_seconds_total{kind}: throttle time given to the budget's clients;
// - ferry_client_quota_throttled_requests_total{kind}: responses that carried a throttle time.
class quota_metrics final : public prometheus::Collectable {
 public:
  explicit quota_metrics(const client_quotas& quotas) : quotas_(quotas) {}

  [[nodiscard]] std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const client_quotas& quotas_;
};

}  // namespace ferry::quota
