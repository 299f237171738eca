#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

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

// A live broker as placement sees it.
struct placement_broker {
  broker_id id;
  std::optional<std::string> rack;  // broker.rack
};

// Kafka's placement for new topics and partitions (AdminUtils.assignReplicasToBrokers): rack-aware when every
// broker has a rack, rack-unaware (above, over the sorted ids) when none has. Rack-aware placement alternates
// the racks in the broker list (racks sorted, brokers sorted within each, one from each rack in turn), puts
// partition p's first replica at (start_index + p) % n of that list and its followers at growing shifts,
// skipping a broker whose rack already has a replica while some rack has none (and a broker that has one
// while some broker has none): each partition spans min(replication factor, racks) racks, and leaders and
// replicas spread evenly. errc::invalid_argument when only some brokers have a rack (Kafka refuses that too),
// and as assign_replicas otherwise.
result<layout::replica_assignment> place_replicas(std::span<const placement_broker> brokers, std::int32_t partitions,
                                                  std::int32_t replication_factor, std::int32_t start_index,
                                                  std::int32_t first_partition = 0);

}  // namespace ferry::coord
