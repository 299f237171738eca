#pragma once

#include <cstddef>

#include "base/result.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// Nodes made before zookeeper.set.acl was turned on keep the open ACL. This gives every node under Kafka's and
// Ferry's root paths that still has it the ACL a new node gets (zk_session::lock_down): what Kafka's
// zookeeper-security-migration tool does by hand, done by each broker at startup; and the chroot node, if
// zookeeper.connect names one (without one, the root stays open: ZooKeeper's "/" is shared by every application,
// so anyone may still delete a top-level node such as /controller). Nodes that vanish meanwhile are
// skipped. Returns how many nodes it changed. The session must have set_acl and an identity.
result<std::size_t> lock_down_existing_nodes(zk_session& session);

}  // namespace ferry::coord
