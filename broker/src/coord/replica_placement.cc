#include "coord/replica_placement.h"

#include <algorithm>
#include <map>
#include <set>

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

namespace {

// Kafka's getRackAlternatedBrokerList: one broker from each rack in turn, racks and brokers in sorted order.
std::vector<placement_broker> rack_alternated(std::span<const placement_broker> brokers) {
  std::map<std::string, std::vector<broker_id>> by_rack;
  for (const auto& b : brokers) by_rack[*b.rack].push_back(b.id);
  for (auto& [rack, ids] : by_rack) std::sort(ids.begin(), ids.end());
  std::vector<placement_broker> out;
  for (std::size_t round = 0; out.size() < brokers.size(); ++round)
    for (const auto& [rack, ids] : by_rack)
      if (round < ids.size()) out.push_back({ids[round], rack});
  return out;
}

}  // namespace

result<layout::replica_assignment> place_replicas(std::span<const placement_broker> brokers, std::int32_t partitions,
                                                  std::int32_t replication_factor, std::int32_t start_index,
                                                  std::int32_t first_partition) {
  const auto with_rack =
      std::count_if(brokers.begin(), brokers.end(), [](const auto& b) { return b.rack.has_value(); });
  if (with_rack == 0) {
    std::vector<broker_id> ids;
    for (const auto& b : brokers) ids.push_back(b.id);
    std::sort(ids.begin(), ids.end());
    return assign_replicas(ids, partitions, replication_factor, start_index, first_partition);
  }
  if (static_cast<std::size_t>(with_rack) != brokers.size()) return errc::invalid_argument;
  if (replication_factor < 1 || static_cast<std::size_t>(replication_factor) > brokers.size()) {
    return errc::invalid_replication_factor;
  }
  if (partitions < 1 || start_index < 0 || first_partition < 0) return errc::invalid_argument;

  const auto arranged = rack_alternated(brokers);
  const auto n = static_cast<std::int64_t>(arranged.size());
  std::set<std::string> all_racks;
  for (const auto& b : arranged) all_racks.insert(*b.rack);
  const auto racks = static_cast<std::int64_t>(all_racks.size());
  std::int64_t shift = start_index;
  layout::replica_assignment out;
  for (std::int64_t p = first_partition; p < std::int64_t{first_partition} + partitions; ++p) {
    if (p > 0 && p % n == 0) ++shift;
    const std::int64_t first = (p + start_index) % n;
    std::vector<broker_id> replicas{arranged[first].id};
    std::set<std::string> racks_used{*arranged[first].rack};
    // n brokers: the k-th candidate comes back to the first after n - 1 steps, so every broker is tried.
    for (std::int64_t k = 0; std::cmp_less(replicas.size(), replication_factor); ++k) {
      const auto& candidate = arranged[(first + 1 + (shift * racks + k) % (n - 1)) % n];
      const bool rack_free = !racks_used.contains(*candidate.rack) || std::cmp_equal(racks_used.size(), racks);
      const bool broker_free = std::find(replicas.begin(), replicas.end(), candidate.id) == replicas.end();
      if (!rack_free || !broker_free) continue;
      replicas.push_back(candidate.id);
      racks_used.insert(*candidate.rack);
    }
    out.emplace(partition_id{static_cast<std::int32_t>(p)}, std::move(replicas));
  }
  return out;
}

}  // namespace ferry::coord
