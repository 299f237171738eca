#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <system_error>

#include "base/result.h"
#include "model/ids.h"

namespace ferry::groups {

struct group_description {
  std::string state;  // Kafka's: Empty, Stable, PreparingRebalance, CompletingRebalance, Dead
  std::string protocol_type;
  std::string protocol;
  std::size_t members = 0;
};

// A committed offset and the metadata string committed with it (OffsetCommit's committed_metadata).
struct committed_offset {
  std::int64_t offset = 0;
  std::string metadata;

  bool operator==(const committed_offset&) const = default;
};

// What the group controller asks of the cluster: a few calls of a Kafka admin client. An interface, so the
// controller can be tested without brokers.
class group_admin {
 public:
  virtual ~group_admin() = default;
  // DescribeGroups at the group's coordinator; a group that does not exist is "Dead" with no members.
  virtual result<group_description> describe(const std::string& group) = 0;
  // The group's committed offsets and their metadata (OffsetFetch of all topics).
  virtual result<std::map<topic_partition, committed_offset>> committed(const std::string& group) = 0;
  // ListOffsets at each partition's leader for the timestamps given (-2 earliest, -1 latest: the high
  // watermark); a timestamp after the last record gives the log end. Fails unless every partition answers.
  virtual result<std::map<topic_partition, std::int64_t>> list_offsets(
      const std::map<topic_partition, std::int64_t>& timestamps) = 0;
  // OffsetCommit as an admin tool does (no member, generation -1): the coordinator refuses it while the group
  // has members (UNKNOWN_MEMBER_ID), which makes "only while the group is empty" atomic. Every partition's
  // commit carries `metadata`.
  virtual result<void> commit(const std::string& group, const std::map<topic_partition, std::int64_t>& offsets,
                              const std::string& metadata) = 0;
};

}  // namespace ferry::groups
