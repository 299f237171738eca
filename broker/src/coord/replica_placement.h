#pragma once

#include <cstdint>
#include <span>

#include "base/result.h"
#include "coord/layout.h"
#include "model/ids.h"

namespace ferry::coord {

// Kafka's rack-unaware replica placement (AdminUtils.assignReplicasToBrokersRackUnaware with a fixed start
// index): the first replica of partition p is brokers[(start_index + p) % n]; followers follow it at a shift
// that grows by one every n partitions, so leaders and followers both spread evenly.
//
// `brokers` are the live broker ids, normally sorted. `first_partition` is the first partition id to assign
// (the existing count when adding partitions). Fails with errc::invalid_replication_factor when the factor is
// below 1 or above the number of brokers, and errc::invalid_argument for a partition count below 1 or a
// negative start index.
result<layout::replica_assignment> assign_replicas(std::span<const broker_id> brokers, std::int32_t partitions,
                                                   std::int32_t replication_factor, std::int32_t start_index,
                                                   std::int32_t first_partition = 0);

}  // namespace ferry::coord
