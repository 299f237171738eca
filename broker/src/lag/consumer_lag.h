#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "group/group_coordinator.h"
#include "lag/high_watermarks.h"

namespace ferry::lag {

// One committed offset and how far its consumers are behind: the partition's high watermark minus the committed
// offset (never below 0: a high watermark read before the commit it trails), unknown while the high watermark is.
struct partition_lag {
  topic_partition partition;
  offset committed;
  std::optional<offset> high_watermark;
  std::optional<std::int64_t> lag;
};

struct group_lag {
  group::group_overview group;
  std::vector<partition_lag> partitions;  // one per committed offset, in the overview's order
  std::int64_t total = 0;                 // over the partitions whose lag is known
};

// Consumer lag of the groups this broker coordinates, computed from the coordinator's committed offsets and the
// high watermarks in memory: a scrape costs one pass over the committed offsets and no request to anyone.
//
// As a Prometheus collectable it exports kafka_exporter's names, so existing lag dashboards and alerts work
// without an exporter: kafka_consumergroup_current_offset and kafka_consumergroup_lag (labels consumergroup,
// topic, partition), kafka_consumergroup_lag_sum (consumergroup, topic) and kafka_consumergroup_members
// (consumergroup); and ferry_consumergroup_state (consumergroup, state: one series per group, always 1, whose label is
// the state); and ferry_consumergroup_offset_commits_total (consumergroup: a counter of the offsets committed
// through this coordinator, which starts again at 0 when the group moves to another one).
class consumer_lag final : public prometheus::Collectable {
 public:
  consumer_lag(group::group_coordinator& groups, const high_watermarks& watermarks)
      : groups_(groups), watermarks_(watermarks) {}

  [[nodiscard]] std::vector<group_lag> groups() const;
  // The lag of one group's committed offsets.
  [[nodiscard]] std::vector<partition_lag> lag_of(
      const std::vector<std::pair<topic_partition, offset>>& committed) const;
  // Every partition some group here has committed an offset for: the high watermarks lag needs.
  [[nodiscard]] std::set<topic_partition> committed_partitions() const;

  [[nodiscard]] std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  group::group_coordinator& groups_;
  const high_watermarks& watermarks_;
};

}  // namespace ferry::lag
