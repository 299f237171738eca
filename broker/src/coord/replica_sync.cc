#include "coord/replica_sync.h"

#include <algorithm>

namespace ferry::coord {

std::vector<topic_partition> replicas_catching_up(const cluster_view& view, broker_id self) {
  std::vector<topic_partition> behind;
  const auto contains = [](const std::vector<broker_id>& ids, broker_id id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [id, partition] : topic.partitions) {
      if (!contains(partition.replicas, self) || contains(partition.adding, self) || !partition.state) continue;
      const auto& state = *partition.state;
      if (state.leader == no_broker || !view.is_live(state.leader)) continue;
      const bool in_sync = contains(state.isr, self) && !view.registered_since(self, state);
      if (!in_sync) behind.push_back({name, id});
    }
  }
  return behind;
}

}  // namespace ferry::coord
