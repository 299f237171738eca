#include "coord/replica_placement.h"

#include "coord/errc.h"

namespace ferry::coord {

result<layout::replica_assignment> assign_replicas(std::span<const broker_id> brokers, std::int32_t partitions,
                                                   std::int32_t replication_factor, std::int32_t start_index,
                                                   std::int32_t first_partition) {
  if (replication_factor < 1 || static_cast<std::size_t>(replication_factor) > brokers.size()) {
    return errc::invalid_replication_factor;
  }
  if (partitions < 1 || start_index < 0 || first_partition < 0) return errc::invalid_argument;
  const auto n = static_cast<std::int64_t>(brokers.size());
  std::int64_t shift = start_index;
  layout::replica_assignment out;
  for (std::int64_t p = first_partition; p < std::int64_t{first_partition} + partitions; ++p) {
    if (p > 0 && p % n == 0) ++shift;
    const std::int64_t first = (p + start_index) % n;
    std::vector<broker_id> replicas{brokers[first]};
    for (std::int64_t j = 0; j < replication_factor - 1; ++j) {
      replicas.push_back(brokers[(first + 1 + (shift + j) % (n - 1)) % n]);
    }
    out.emplace(partition_id{static_cast<std::int32_t>(p)}, std::move(replicas));
  }
  return out;
}

}  // namespace ferry::coord
