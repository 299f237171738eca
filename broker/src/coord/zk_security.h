#pragma once

#include <string>
#include <string_view>

namespace ferry::coord {

// Who a session is to ZooKeeper and what the nodes it creates allow (Kafka's zookeeper.set.acl). Brokers and
// the operator of one cluster share one identity, so each may change what the others made.
struct zk_security {
  // ZooKeeper's digest scheme (zoo_add_auth "digest", "user:password"); the client sends it again on every
  // reconnect. Empty: the session is anonymous.
  std::string digest_username;
  std::string digest_password;
  // Nodes this session creates: ALL for its own identity and READ for anyone, and nothing for anyone else at
  // and below the sensitive paths. Needs an identity. Off: nodes are open to anyone (Kafka's default).
  bool set_acl = false;
};

// Kafka's sensitive root paths (ZkData.SensitiveRootPaths): SCRAM credentials and delegation tokens, which
// only the cluster's own identity may read once set_acl is on.
bool is_sensitive_path(std::string_view path);

}  // namespace ferry::coord
