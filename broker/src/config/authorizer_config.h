#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::config {

// Kafka's authorizer settings. Ferry has one authorizer, Kafka's ACL authorizer, and turns it on when
// authorizer.class.name names one of Kafka's: the ZooKeeper-mode kafka.security.authorizer.AclAuthorizer or
// KRaft's org.apache.kafka.metadata.authorizer.StandardAuthorizer (both decide alike). Any other class is
// refused by name: a plugin that would be silently ignored leaves a cluster open.
struct authorizer_settings {
  bool enabled = false;  // authorizer.class.name set (empty, Kafka's default: every request is allowed)
  // super.users: principals ("User:admin") that pass every check. Separated by semicolons, because a
  // certificate's distinguished name contains commas.
  std::vector<std::string> super_users;
  // allow.everyone.if.no.acl.found: a resource that no ACL names is open to everyone (Kafka's default: closed).
  bool allow_everyone_if_no_acl_found = false;
};

// Whether `key` is one of the settings read_authorizer_settings reads.
bool is_authorizer_setting(std::string_view key);

// Throws config_exception naming the setting: an authorizer class Ferry does not have, a super user that is no
// "Type:name" principal, a non-boolean allow.everyone.if.no.acl.found, or the latter two without an authorizer.
authorizer_settings read_authorizer_settings(const std::map<std::string, std::string>& settings);

}  // namespace ferry::config
