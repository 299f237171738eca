#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "authz/acl.h"
#include "base/result.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// The cluster's ACLs in Kafka's ZooKeeper layout (coord/acl_layout.h), written as Kafka's ZooKeeper-mode
// authorizer writes them: a pattern's node is rewritten conditionally on the version it was read at (losing a
// race to another writer re-reads and tries again), deleted when no entry is left, and each change is announced
// on the pattern's change path in the same multi-op, so a broker that sees the announcement reads the new
// node. Blocking and thread-safe.
class acl_store {
 public:
  explicit acl_store(zk_session& session) : session_(session) {}

  // Every ACL the ensemble holds. A node that does not decode is left out and its path added to `unreadable`
  // (when given), so one bad node written by someone else does not hide the others.
  result<std::vector<authz::acl_binding>> read_all(std::vector<std::string>* unreadable = nullptr);
  // One pattern's entries: none when its node does not exist.
  result<std::vector<authz::acl_entry>> read(const authz::resource_pattern& resource);
  // Adds the entries the pattern does not have yet.
  result<void> add(const authz::resource_pattern& resource, std::span<const authz::acl_entry> entries);
  // Removes the pattern's entries that `doomed` selects; the ones removed.
  result<std::vector<authz::acl_entry>> remove_if(const authz::resource_pattern& resource,
                                                  const std::function<bool(const authz::acl_entry&)>& doomed);

 private:
  using change = std::function<std::vector<authz::acl_entry>(const std::vector<authz::acl_entry>&)>;
  // Reads the pattern's node, computes its new entries and writes them with the announcement.
  result<void> update(const authz::resource_pattern& resource, const change& next);

  zk_session& session_;
};

}  // namespace ferry::coord
