#include "coord/reassignment.h"

#include <algorithm>

namespace ferry::coord {
namespace {

bool contains(const std::vector<broker_id>& ids, broker_id id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The members of `from` that are (or, with keep = false, are not) in `of`, in `from`'s order.
std::vector<broker_id> filtered(const std::vector<broker_id>& from, const std::vector<broker_id>& of, bool keep) {
  std::vector<broker_id> out;
  for (const auto id : from)
    if (contains(of, id) == keep) out.push_back(id);
  return out;
}

}  // namespace

std::vector<broker_id> original_replicas(const partition_assignment& current) {
  return filtered(current.replicas, current.adding, false);
}

partition_assignment reassign_to(const partition_assignment& current, const std::vector<broker_id>& target) {
  const auto original = original_replicas(current);
  partition_assignment next;
  next.replicas = target;
  for (const auto id : original)
    if (!contains(target, id)) next.replicas.push_back(id);
  next.adding = filtered(target, original, false);
  next.removing = filtered(original, target, false);
  // Nothing to add or remove: the target is the original assignment, in its own order.
  if (next.adding.empty() && next.removing.empty()) next.replicas = target;
  return next;
}

partition_assignment assignment_of(const layout::topic_assignment& topic, partition_id p) {
  partition_assignment out;
  if (const auto it = topic.partitions.find(p); it != topic.partitions.end()) out.replicas = it->second;
  if (const auto it = topic.adding.find(p); it != topic.adding.end()) out.adding = it->second;
  if (const auto it = topic.removing.find(p); it != topic.removing.end()) out.removing = it->second;
  return out;
}

void set_assignment(layout::topic_assignment& topic, partition_id p, partition_assignment assignment) {
  topic.partitions[p] = std::move(assignment.replicas);
  if (assignment.adding.empty())
    topic.adding.erase(p);
  else
    topic.adding[p] = std::move(assignment.adding);
  if (assignment.removing.empty())
    topic.removing.erase(p);
  else
    topic.removing[p] = std::move(assignment.removing);
}

std::optional<layout::leader_and_isr> completed_state(const cluster_view& view, const partition_info& partition,
                                                      std::int32_t controller_epoch) {
  if (!partition.reassigning() || !partition.state) return std::nullopt;
  const auto& current = *partition.state;
  const auto target = partition.target_replicas();
  const auto in_sync = [&](broker_id r) {
    return contains(current.isr, r) && view.is_live(r) && !view.registered_since(r, current);
  };
  if (!std::all_of(target.begin(), target.end(), in_sync)) return std::nullopt;
  layout::leader_and_isr next{current.leader, current.epoch, filtered(current.isr, target, true), controller_epoch};
  if (!contains(target, current.leader)) {
    auto leader = std::find_if(target.begin(), target.end(), [&](broker_id r) { return view.can_lead(r); });
    if (leader == target.end()) leader = target.begin();  // all shutting down: one of them leads all the same
    next.leader = *leader;
    next.epoch = leader_epoch{current.epoch.value() + 1};
  }
  return next;
}

std::size_t reassignments_in_flight(const cluster_view& view) {
  std::size_t in_flight = 0;
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, partition] : topic.partitions) in_flight += partition.reassigning() ? 1 : 0;
  }
  return in_flight;
}

}  // namespace ferry::coord
