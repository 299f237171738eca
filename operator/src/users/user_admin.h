#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "authz/acl.h"
#include "base/result.h"
#include "users/user_plan.h"

namespace ferry::users {

// What the User controller asks of the cluster: the Kafka admin calls of a user's credential, ACLs and quotas. An
// interface, so the controller can be tested without brokers. Errors are Kafka's codes (kafka::kafka_error) or
// the connection's; detail() has the message a broker sent with the last one, if any.
class user_admin {
 public:
  virtual ~user_admin() = default;
  // Whether the user has a SCRAM-SHA-512 credential (DescribeUserScramCredentials).
  virtual result<bool> has_credential(const std::string& user) = 0;
  // Stores the SCRAM-SHA-512 credential of `password` (AlterUserScramCredentials, salted here: the password
  // never goes over the wire).
  virtual result<void> store_credential(const std::string& user, std::string_view password) = 0;
  // Deletes the user's SCRAM-SHA-512 credential; done when there is none.
  virtual result<void> delete_credential(const std::string& user) = 0;
  // The principal's ACLs on every resource (DescribeAcls).
  virtual result<std::vector<authz::acl_binding>> acls_of(const std::string& principal) = 0;
  virtual result<void> create_acls(const std::vector<authz::acl_binding>& acls) = 0;
  // Deletes exactly these ACLs (DeleteAcls with one exact filter each).
  virtual result<void> delete_acls(const std::vector<authz::acl_binding>& acls) = 0;
  // The user entity's quotas by Kafka's key (DescribeClientQuotas, strict: not those of its client ids).
  virtual result<std::map<std::string, double>> quotas_of(const std::string& user) = 0;
  virtual result<void> alter_quotas(const std::string& user, const quota_plan& plan) = 0;
  [[nodiscard]] virtual const std::string& detail() const = 0;
};

}  // namespace ferry::users
