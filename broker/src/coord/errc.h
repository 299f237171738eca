#pragma once

#include <system_error>

namespace ferry::coord {

// Why a coordination call failed. ZooKeeper return codes map onto these in from_zk_code().
enum class errc {
  no_node = 1,       // the znode (topic, config, state) does not exist
  node_exists,       // the znode (topic, broker id, ...) already exists
  bad_version,       // conditional update lost a race: the znode changed since it was read
  not_empty,         // delete of a znode that still has children
  connection_loss,   // no ZooKeeper connection within the operation timeout
  session_expired,   // the session ended; the owner re-registers on the next one
  timeout,           // gave up waiting (startup connect, stale registration, a view condition)
  closed,            // the session or registry is shutting down
  not_controller,    // a controller write was fenced: another broker holds a newer controller epoch
  invalid_data,      // a znode holds JSON (or text) that is not the expected shape
  invalid_argument,  // bad topic name, partition list, ISR or replica assignment
  invalid_replication_factor,
  // ElectLeaders' per-partition outcomes.
  election_not_needed,             // the wanted leader leads already
  preferred_leader_not_available,  // the preferred replica is not alive or not in sync
  eligible_leaders_not_available,  // no live replica to elect
  not_allowed,                     // the znode's ACL refuses this session (ZooKeeper's NoAuth)
  zookeeper_error,                 // any other ZooKeeper failure (auth, marshalling, system error)
  internal_error,                  // a bug caught by the registry worker (logged there); the work is retried
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

// Maps a ZOO_ERRORS value (ZOK excluded) to errc.
errc from_zk_code(int rc);

}  // namespace ferry::coord

template <>
struct std::is_error_code_enum<ferry::coord::errc> : std::true_type {};
