#include "balance/replica_balance.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "coord/reassignment.h"

namespace ferry::balance {
namespace {

struct planner {
  const coord::cluster_view& view;
  const balance_limits& limits;
  std::map<broker_id, std::size_t> load;  // brokers that may receive replicas
  std::set<std::pair<std::string, partition_id>> moved;

  [[nodiscard]] std::string rack_of(broker_id b) const {
    const auto it = view.brokers.find(b);
    return it == view.brokers.end() || !it->second.rack ? std::string{} : *it->second.rack;
  }

  [[nodiscard]] std::size_t racks_of(const std::vector<broker_id>& replicas) const {
    std::set<std::string> racks;
    for (const auto r : replicas) racks.insert(rack_of(r));
    return racks.size();
  }

  // The least loaded broker that can replace replicas[index] without a duplicate or fewer racks.
  [[nodiscard]] std::optional<broker_id> replacement(const std::vector<broker_id>& replicas, std::size_t index,
                                                     std::size_t max_load) const {
    std::optional<broker_id> best;
    const auto racks_before = racks_of(replicas);
    for (const auto& [candidate, count] : load) {
      if (count >= max_load) continue;
      if (std::find(replicas.begin(), replicas.end(), candidate) != replicas.end()) continue;
      auto changed = replicas;
      changed[index] = candidate;
      // A leaving broker's rack may be gone for good: then only duplicates matter.
      if (racks_of(changed) < racks_before && !limits.leaving.contains(replicas[index])) continue;
      if (!best || count < load.at(*best)) best = candidate;
    }
    return best;
  }

  void apply(std::vector<replica_move>& moves, const std::string& topic, partition_id p, std::vector<broker_id> target,
             broker_id from, broker_id to) {
    if (load.contains(from)) --load[from];
    ++load[to];
    moved.emplace(topic, p);
    moves.push_back({topic, p, std::move(target)});
  }
};

}  // namespace

std::map<broker_id, std::size_t> replica_loads(const coord::cluster_view& view) {
  std::map<broker_id, std::size_t> loads;
  for (const auto& [id, broker] : view.brokers) loads[id] = 0;
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, partition] : topic.partitions) {
      for (const auto r : partition.target_replicas()) {
        if (const auto it = loads.find(r); it != loads.end()) ++it->second;
      }
    }
  }
  return loads;
}

std::int32_t replica_floor(const coord::cluster_view& view, const std::vector<replica_move>& moves) {
  std::int32_t floor = 0;
  const auto count = [&](const std::vector<broker_id>& replicas) {
    for (const auto r : replicas) floor = std::max(floor, r.value() + 1);
  };
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, partition] : topic.partitions) count(partition.replicas);
  }
  for (const auto& m : moves) count(m.target);
  return floor;
}

balance_plan plan_balance(const coord::cluster_view& view, const std::set<std::string>& managed,
                          const balance_limits& limits) {
  const auto in_flight = coord::reassignments_in_flight(view);
  balance_plan result;
  auto& moves = result.moves;
  if (in_flight >= limits.max_moves) return result;
  std::size_t budget = limits.max_moves - in_flight;

  planner plan{view, limits, {}, {}};
  for (const auto& [id, count] : replica_loads(view)) {
    if (!limits.leaving.contains(id)) plan.load.emplace(id, count);
  }
  const auto movable = [&](const std::string& name, partition_id p, const coord::partition_info& partition) {
    return managed.contains(name) && !partition.reassigning() && !plan.moved.contains({name, p});
  };

  // Drain leaving brokers first.
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, partition] : topic.partitions) {
      if (budget == 0 || partition.reassigning()) continue;
      auto target = partition.replicas;
      bool changed = false;
      for (std::size_t i = 0; i < target.size(); ++i) {
        if (!limits.leaving.contains(target[i])) continue;
        const auto to = plan.replacement(target, i, SIZE_MAX);
        if (!to) {
          result.undrainable.push_back(name + "-" + std::to_string(p.value()));
          continue;
        }
        if (plan.load.contains(target[i])) --plan.load[target[i]];
        target[i] = *to;
        ++plan.load[*to];
        changed = true;
      }
      if (changed) {
        plan.moved.emplace(name, p);
        moves.push_back({name, p, std::move(target)});
        --budget;
      }
    }
  }

  // Then even out: one replica at a time from the most to the least loaded broker.
  while (limits.spread && budget > 0 && !plan.load.empty()) {
    const auto [least, most] = std::minmax_element(plan.load.begin(), plan.load.end(),
                                                   [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most->second < least->second + 2) break;
    const broker_id from = most->first;
    const std::size_t ceiling = most->second - 1;  // a receiver must stay below the giver's new load
    bool found = false;
    for (const auto& [name, topic] : view.topics) {
      for (const auto& [p, partition] : topic.partitions) {
        if (!movable(name, p, partition)) continue;
        const auto at = std::find(partition.replicas.begin(), partition.replicas.end(), from);
        if (at == partition.replicas.end()) continue;
        const auto index = static_cast<std::size_t>(at - partition.replicas.begin());
        const auto to = plan.replacement(partition.replicas, index, ceiling);
        if (!to) continue;
        auto target = partition.replicas;
        target[index] = *to;
        plan.apply(moves, name, p, std::move(target), from, *to);
        found = true;
        break;
      }
      if (found) break;
    }
    if (!found) break;
    --budget;
  }
  return result;
}

}  // namespace ferry::balance
