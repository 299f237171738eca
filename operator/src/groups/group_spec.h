#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "coord/cluster_view.h"

namespace ferry::groups {

// Where spec.resetOffsets moves one topic's committed offsets.
struct topic_reset {
  enum class to { earliest, latest, timestamp, offsets };
  std::string topic;
  to target = to::earliest;
  std::int64_t timestamp_ms = 0;                 // to::timestamp: the first offset at or after it
  std::map<partition_id, std::int64_t> offsets;  // to::offsets: per partition
};

// A ConsumerGroup resource's spec (consumergroups.ferry.dev).
struct group_spec {
  std::string group_id;
  std::vector<topic_reset> reset;  // empty: nothing asked
};

// The spec, and why its resetOffsets cannot be used if so (for the OffsetsReset condition, reason
// InvalidReset). The API server's schema checks most of it; this guards what it cannot (timestamps).
struct group_spec_reading {
  group_spec spec;
  std::string reset_error;
};
group_spec_reading read_group_spec(const nlohmann::json& resource);

// The ListOffsets timestamps a reset needs per partition (Kafka's -2 earliest, -1 latest, or a time), and the
// explicit offsets that need no lookup. A topic that does not exist, or a partition it does not have, is an
// error message naming it.
struct reset_lookup {
  std::map<topic_partition, std::int64_t> timestamps;
  std::map<topic_partition, std::int64_t> explicit_offsets;
};
std::variant<reset_lookup, std::string> plan_reset(const std::vector<topic_reset>& reset,
                                                   const coord::cluster_view& view);

inline constexpr std::int64_t earliest_timestamp = -2;
inline constexpr std::int64_t latest_timestamp = -1;

// Lag from committed offsets and log end offsets (high watermarks): the total and the worst partition.
struct lag_summary {
  std::int64_t total = 0;
  std::optional<std::pair<topic_partition, std::int64_t>> worst;
  std::size_t partitions = 0;  // partitions with a committed offset and a known end

  bool operator==(const lag_summary&) const = default;
};
lag_summary summarize_lag(const std::map<topic_partition, std::int64_t>& committed,
                          const std::map<topic_partition, std::int64_t>& ends);

}  // namespace ferry::groups
