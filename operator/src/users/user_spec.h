#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "authz/acl.h"

namespace ferry::users {

// How a User logs in (spec.authentication.type).
enum class authentication {
  none,           // no credential: ACLs and quotas for a principal that logs in some other way
  scram_sha_512,  // a password, stored as Kafka's SCRAM-SHA-512 credential
  tls,            // a client certificate from the clients CA, whose subject is CN=<name>
};

// A Secret's key (spec.authentication.password.valueFrom.secretKeyRef), in the User's namespace.
struct secret_key_ref {
  std::string name;
  std::string key;
  bool operator==(const secret_key_ref&) const = default;
};

// A User resource's spec (users.ferry.dev), in the shape of Strimzi's KafkaUser: the Kafka user is the resource's
// name.
struct user_spec {
  std::string name;
  authentication auth = authentication::none;
  std::optional<secret_key_ref> password;  // scram-sha-512: this password instead of a generated one
  std::vector<authz::acl_binding> acls;    // sorted, no duplicates; each for principal()
  bool remove_unmanaged_acls = false;      // spec.authorization.removeUnmanagedAcls
  std::map<std::string, double> quotas;    // by Kafka's key (producer_byte_rate, ...)

  // The principal its ACLs name and the brokers authorize: User:<name>, or User:CN=<name> for a certificate (the
  // brokers' DEFAULT ssl.principal.mapping.rules).
  [[nodiscard]] std::string principal() const;
};

// The spec, or why it cannot be used (the Ready condition's message, reason InvalidSpec), naming the field. The
// API server's schema checks shapes; this checks what it cannot: ACLs Kafka would refuse (an operation that does
// not apply to the resource type), hosts that are not addresses, quota values AlterClientQuotas refuses.
std::variant<user_spec, std::string> read_user_spec(const nlohmann::json& resource);

// The JSON form of an ACL in a User's spec and status ({resource: {type, name, patternType}, operation, host,
// type}), in the spec's names.
nlohmann::json acl_to_json(const authz::acl_binding& acl);
std::optional<authz::acl_binding> acl_from_json(const nlohmann::json& entry, const std::string& principal);

}  // namespace ferry::users
