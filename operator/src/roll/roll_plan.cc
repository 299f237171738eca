#include "roll/roll_plan.h"

#include <algorithm>
#include <utility>

namespace ferry::roll {

std::optional<std::string> roll_blocker(const coord::cluster_view& view, broker_id broker) {
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, partition] : topic.partitions) {
      const auto& replicas = partition.replicas;
      if (std::find(replicas.begin(), replicas.end(), broker) == replicas.end()) continue;
      const topic_partition tp{name, p};
      const auto label = name + "-" + std::to_string(p.value());
      if (!partition.state) return label + " has no state yet";
      const auto& isr = partition.state->isr;
      if (std::find(isr.begin(), isr.end(), broker) == isr.end()) continue;  // out of sync: loses nothing
      std::size_t in_sync = 0;
      for (const auto r : replicas) {
        if (std::find(isr.begin(), isr.end(), r) != isr.end() && view.hosts(r, tp)) ++in_sync;
      }
      if (in_sync < replicas.size()) {
        return label + " has ISR " + std::to_string(in_sync) + " of " + std::to_string(replicas.size());
      }
    }
  }
  return std::nullopt;
}

roll_plan plan_roll(const roll_input& input, const coord::cluster_view& view) {
  roll_plan plan;
  std::vector<const broker_pod*> pods;
  for (const auto& pod : input.pods) pods.push_back(&pod);
  // The highest ordinal first, as the StatefulSet controller rolls.
  std::sort(pods.begin(), pods.end(), [](const auto* a, const auto* b) { return a->ordinal > b->ordinal; });
  const broker_pod* terminating = nullptr;
  for (const auto* pod : pods) {
    if (pod->terminating) {
      terminating = terminating == nullptr ? pod : terminating;
    } else if (pod->revision == input.update_revision) {
      ++plan.updated;
    } else {
      ++plan.outdated;
    }
  }
  if (plan.outdated == 0) {
    if (terminating != nullptr) plan.why = terminating->name + " is terminating";
    return plan;
  }
  if (terminating != nullptr) {
    plan.why = terminating->name + " is terminating";
    return plan;
  }
  if (std::cmp_less(pods.size(), input.replicas)) {
    plan.why = std::to_string(input.replicas - static_cast<std::int32_t>(pods.size())) + " broker pods are missing";
    return plan;
  }
  const auto outdated = [&](const broker_pod* pod) { return pod->revision != input.update_revision; };
  // Not serving anyway: restarting it costs no replica.
  for (const auto* pod : pods) {
    if (outdated(pod) && !pod->ready && !pod->starting) {
      plan.delete_pod = pod->name;
      plan.why = pod->name + " is outdated and not ready";
      return plan;
    }
  }
  for (const auto* pod : pods) {
    if (pod->starting) {
      plan.why = pod->name + " is starting";
      return plan;
    }
    if (!pod->ready) {
      plan.why = pod->name + " is not ready";
      return plan;
    }
    if (!view.is_live(broker_id{pod->ordinal})) {
      plan.why = "broker " + std::to_string(pod->ordinal) + " is not registered in ZooKeeper";
      return plan;
    }
  }
  std::vector<const broker_pod*> candidates;
  for (const auto* pod : pods) {
    if (outdated(pod) && broker_id{pod->ordinal} != view.controller) candidates.push_back(pod);
  }
  if (candidates.empty()) {
    for (const auto* pod : pods)
      if (outdated(pod)) candidates.push_back(pod);
  }
  std::string first_blocker;
  for (const auto* pod : candidates) {
    const auto blocker = roll_blocker(view, broker_id{pod->ordinal});
    if (!blocker) {
      plan.delete_pod = pod->name;
      plan.why = "every partition broker " + std::to_string(pod->ordinal) + " hosts has its full ISR elsewhere";
      return plan;
    }
    if (first_blocker.empty()) first_blocker = "partition " + *blocker + " (" + pod->name + ")";
  }
  plan.why = first_blocker;
  return plan;
}

}  // namespace ferry::roll
