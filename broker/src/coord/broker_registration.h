#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "coord/layout.h"
#include "coord/zk_session.h"
#include "model/ids.h"

namespace ferry::coord {

// What a broker registers about itself in /brokers/ids/<id>.
struct broker_endpoint {
  broker_id id;
  // The advertised listeners, the inter-broker one first: the registration's host and port fields carry it, and
  // other brokers and the operator connect through those.
  std::vector<layout::endpoint> endpoints;
  std::optional<std::string> rack;
  // The URL of the broker's schema registry listener, where other brokers forward registry writes.
  std::optional<std::string> schema_registry;
};

// Creates this broker's ephemeral /brokers/ids/<id> on `session`. When the node exists from an earlier
// session of this broker (a restart within the session timeout), waits until `deadline` for it to vanish;
// without a deadline, or past it, errc::node_exists names the other session. A node of this very session (a
// resumed one, or a retried create whose reply was lost) is created again, so every run registers with a new
// czxid, Kafka's broker epoch. Blocking.
result<void> register_broker(zk_session& session, const broker_endpoint& self,
                             std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace ferry::coord
