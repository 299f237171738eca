#pragma once

#include <map>
#include <string>
#include <vector>

#include "authz/acl.h"

namespace ferry::users {

// The ACL changes that make the principal's ACLs the spec's: create what is missing; delete what the operator
// made before (the User's status.acls) and the spec no longer has. ACLs of the principal it did not make are
// `unmanaged`: reported, and deleted only when the spec asks (removeUnmanagedAcls).
struct acl_plan {
  std::vector<authz::acl_binding> create;
  std::vector<authz::acl_binding> remove;
  std::vector<authz::acl_binding> unmanaged;  // present, neither wanted nor made by the operator
};
acl_plan plan_acls(const std::vector<authz::acl_binding>& wanted, const std::vector<authz::acl_binding>& present,
                   const std::vector<authz::acl_binding>& made_before, bool remove_unmanaged);

// The quota changes that make the user's quotas (the user entity's, without a client id) the spec's: every key
// the spec does not set is removed, since the User owns its quotas.
struct quota_plan {
  std::map<std::string, double> set;
  std::vector<std::string> remove;
  [[nodiscard]] bool empty() const { return set.empty() && remove.empty(); }
};
quota_plan plan_quotas(const std::map<std::string, double>& wanted, const std::map<std::string, double>& present);

}  // namespace ferry::users
