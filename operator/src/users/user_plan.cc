#include "users/user_plan.h"

#include <algorithm>
#include <set>

namespace ferry::users {

acl_plan plan_acls(const std::vector<authz::acl_binding>& wanted, const std::vector<authz::acl_binding>& present,
                   const std::vector<authz::acl_binding>& made_before, bool remove_unmanaged) {
  const std::set<authz::acl_binding> want(wanted.begin(), wanted.end());
  const std::set<authz::acl_binding> have(present.begin(), present.end());
  const std::set<authz::acl_binding> made(made_before.begin(), made_before.end());
  acl_plan plan;
  std::set_difference(want.begin(), want.end(), have.begin(), have.end(), std::back_inserter(plan.create));
  for (const auto& acl : have) {
    if (want.contains(acl)) continue;
    (made.contains(acl) || remove_unmanaged ? plan.remove : plan.unmanaged).push_back(acl);
  }
  return plan;
}

quota_plan plan_quotas(const std::map<std::string, double>& wanted, const std::map<std::string, double>& present) {
  quota_plan plan;
  for (const auto& [key, value] : wanted) {
    const auto now = present.find(key);
    if (now == present.end() || now->second != value) plan.set[key] = value;
  }
  for (const auto& [key, value] : present) {
    if (!wanted.contains(key)) plan.remove.push_back(key);
  }
  return plan;
}

}  // namespace ferry::users
