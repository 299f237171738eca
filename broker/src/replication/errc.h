#pragma once

#include <system_error>

namespace ferry::replication {

enum class errc {
  not_leader = 1,     // NOT_LEADER_OR_FOLLOWER: this broker does not lead the partition
  unknown_partition,  // UNKNOWN_TOPIC_OR_PARTITION: not hosted here and not in the cluster view
  not_follower,       // NOT_LEADER_OR_FOLLOWER: a follower's write to a replica that leads
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::replication

template <>
struct std::is_error_code_enum<ferry::replication::errc> : std::true_type {};
