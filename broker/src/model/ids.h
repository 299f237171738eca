#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "base/named_type.h"

namespace ferry {

// Position of a record in a partition's log.
using offset = named_type<std::int64_t, struct offset_tag>;
// Generation of a partition's leadership; stamped into every batch the leader appends.
using leader_epoch = named_type<std::int32_t, struct leader_epoch_tag>;
using producer_id = named_type<std::int64_t, struct producer_id_tag>;
using producer_epoch = named_type<std::int16_t, struct producer_epoch_tag>;
using broker_id = named_type<std::int32_t, struct broker_id_tag>;
using partition_id = named_type<std::int32_t, struct partition_id_tag>;

inline constexpr offset no_offset{-1};
inline constexpr leader_epoch no_leader_epoch{-1};
inline constexpr producer_id no_producer_id{-1};
inline constexpr broker_id no_broker{-1};

[[nodiscard]] constexpr offset next(offset o) { return offset{o.value() + 1}; }

// A topic name and partition number: the unit of storage, leadership and replication.
struct topic_partition {
  std::string topic;
  partition_id partition{0};

  auto operator<=>(const topic_partition&) const = default;

  // "<topic>-<partition>", the name of the partition's log directory, as in Kafka.
  [[nodiscard]] std::string directory_name() const { return topic + "-" + std::to_string(partition.value()); }

  friend std::ostream& operator<<(std::ostream& out, const topic_partition& tp) {
    return out << tp.topic << '/' << tp.partition;
  }
};

}  // namespace ferry

template <>
struct std::hash<ferry::topic_partition> {
  std::size_t operator()(const ferry::topic_partition& tp) const noexcept {
    return std::hash<std::string>{}(tp.topic) * 31 + static_cast<std::size_t>(tp.partition.value());
  }
};
