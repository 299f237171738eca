#include "replication/replica_selector.h"

#include <tuple>

namespace ferry::replication {

std::optional<broker_id> rack_aware_read_replica(std::string_view client_rack, const std::string& leader_rack,
                                                 const std::vector<read_candidate>& candidates) {
  if (client_rack.empty() || leader_rack == client_rack) return std::nullopt;
  const read_candidate* best = nullptr;
  for (const auto& c : candidates) {
    if (c.rack != client_rack) continue;
    if (best == nullptr ||
        std::tuple(c.log_end, c.last_caught_up_ms) > std::tuple(best->log_end, best->last_caught_up_ms))
      best = &c;
  }
  if (best == nullptr) return std::nullopt;
  return best->id;
}

}  // namespace ferry::replication
