#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "coord/cluster_view.h"
#include "groups/group_admin.h"
#include "kube/time_format.h"

namespace ferry::groups {

// Where spec.resetOffsets moves one topic's committed offsets.
struct topic_reset {
  enum class to { earliest, latest, timestamp, offsets };
  std::string topic;
  to target = to::earliest;
  std::int64_t timestamp_ms = 0;                 // to::timestamp: the first offset at or after it
  std::map<partition_id, std::int64_t> offsets;  // to::offsets: per partition
};

// A ConsumerGroup resource's spec (consumergroups.ferry.dev). spec.resetOffsets is a one-shot request: named by
// requestId, applied at most once, and never after notAfter.
struct group_spec {
  std::string group_id;
  bool asks_reset = false;  // spec.resetOffsets is present (valid or not)
  std::string request_id;   // spec.resetOffsets.requestId
  std::optional<kube::system_time> not_after;
  std::vector<topic_reset> reset;  // empty: nothing asked, or not usable (reset_error)
};

// The spec, and why its resetOffsets cannot be used if so (for the OffsetsReset condition, reason
// InvalidReset). The API server's schema checks most of it; this guards what it cannot (times), and resources
// stored before requestId and notAfter were required.
struct group_spec_reading {
  group_spec spec;
  std::string reset_error;
};
group_spec_reading read_group_spec(const nlohmann::json& resource);

// How far ahead of the moment it is judged a request's notAfter may be: a reset is a request for now (or for a
// maintenance window today), not standing configuration, so a manifest left in Git goes inert within a day.
inline constexpr std::chrono::hours max_reset_wait{24};
inline constexpr std::size_t max_request_id_length = 100;

// status.resetOffsets: the request judged for good (applied, found applied already, refused or expired) and the
// generation it was judged at (which is what identifies a request without a requestId).
struct reset_record {
  std::string request_id;
  std::int64_t generation = -1;
};
reset_record read_reset_record(const nlohmann::json& resource);

// What to do with spec.resetOffsets now, before asking the cluster anything.
struct reset_verdict {
  enum class step {
    none,      // nothing asked
    recorded,  // this request was judged for good already: never again
    refuse,    // InvalidReset, recorded
    expire,    // ResetExpired (notAfter has passed), recorded
    apply,     // try it: the cluster decides (applied before, the group active, ...)
  };
  step what = step::none;
  std::string message;  // refuse, expire
};
reset_verdict judge_reset(const group_spec_reading& read, const reset_record& record, std::int64_t generation,
                          kube::system_time now);

// The metadata a reset commits with each offset, which survives the resource (deleted, restored, replaced) for
// as long as no consumer commits over it: a request found there was applied already.
std::string reset_marker(std::string_view request_id);
bool marked_applied(const std::map<topic_partition, committed_offset>& committed, std::string_view request_id);

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
lag_summary summarize_lag(const std::map<topic_partition, committed_offset>& committed,
                          const std::map<topic_partition, std::int64_t>& ends);

}  // namespace ferry::groups
