#include "server/view_wait.h"

namespace ferry::server {

bool topic_has_leaders(const coord::cluster_view& view, const std::string& topic, std::int32_t partitions) {
  const auto* info = view.find_topic(topic);
  if (info == nullptr || static_cast<std::int32_t>(info->partitions.size()) < partitions) return false;
  for (const auto& [id, partition] : info->partitions)
    if (!partition.state || partition.state->leader == no_broker) return false;
  return true;
}

}  // namespace ferry::server
