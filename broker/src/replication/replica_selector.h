#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/ids.h"

namespace ferry::replication {

// A follower a consumer could read from instead of the leader (KIP-392): in the ISR, with the consumer's fetch
// offset in its log as its last fetch said.
struct read_candidate {
  broker_id id;
  std::optional<std::string> rack;  // its broker.rack, as registered
  offset log_end;
  std::int64_t last_caught_up_ms = 0;
};

// Kafka's RackAwareReplicaSelector: for a consumer in `client_rack`, the leader if it is in that rack or no
// candidate is; otherwise the candidate in that rack with the longest log (then the one caught up last). nullopt
// means the leader, which the fetch then serves itself.
[[nodiscard]] std::optional<broker_id> rack_aware_read_replica(std::string_view client_rack,
                                                               const std::string& leader_rack,
                                                               const std::vector<read_candidate>& candidates);

}  // namespace ferry::replication
