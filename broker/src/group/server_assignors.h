#pragma once

// The assignors the coordinator runs for groups of the consumer protocol (KIP-848): `uniform`, the default,
// and `range`. Each turns the members' subscriptions and their current targets into a new target assignment
// in which every partition of every subscribed topic has exactly one member.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "group/consumer_group_records.h"

namespace ferry::group {

struct assignor_member {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::set<topic_uuid> subscribed;  // topics that exist, by id
  topic_id_partitions current_target;
};

// Partition count per topic id, for every topic some member subscribes to.
using topic_partition_counts = std::map<topic_uuid, std::int32_t>;
// The new target of each member, by member id; a member with nothing has an empty entry.
using target_assignment = std::map<std::string, topic_id_partitions>;

inline constexpr std::string_view uniform_assignor = "uniform";
inline constexpr std::string_view range_assignor = "range";

// Sticky and balanced: members keep what they had while each member's count stays within one of every other
// member subscribed to the same topics; new and freed partitions go to the least loaded subscriber. Members
// are taken in member id order, topics in id order, so the same input always gives the same answer.
[[nodiscard]] target_assignment assign_uniform(const std::vector<assignor_member>& members,
                                               const topic_partition_counts& topics);

// Kafka's range assignor: per topic, its subscribers (static members first, by instance id, then the others by
// member id) get consecutive ranges, the first ones one partition more when it does not divide evenly. Not
// sticky; topics with as many partitions and the same subscribers are co-partitioned.
[[nodiscard]] target_assignment assign_range(const std::vector<assignor_member>& members,
                                             const topic_partition_counts& topics);

// `name` is uniform_assignor or range_assignor.
[[nodiscard]] target_assignment assign(std::string_view name, const std::vector<assignor_member>& members,
                                       const topic_partition_counts& topics);

}  // namespace ferry::group
