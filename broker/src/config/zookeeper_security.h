#pragma once

#include <map>
#include <string>
#include <string_view>

namespace ferry::config {

// How the broker logs in to ZooKeeper and locks the nodes it writes. zookeeper.set.acl is Kafka's; the identity
// is Ferry's: ZooKeeper's digest scheme, where Kafka reads a JAAS "Client" section (which Ferry does not). The
// operator logs in with the same identity (--zookeeper-digest-username), so the cluster's writers are one.
struct zookeeper_security_settings {
  bool set_acl = false;              // zookeeper.set.acl
  std::string digest_username;       // zookeeper.digest.username
  std::string digest_password_file;  // zookeeper.digest.password.file: the password on its first line
};

// Whether `key` is a ZooKeeper security setting: the ones above, or Kafka's that Ferry refuses by name
// (ZooKeeper over TLS, the JAAS context).
bool is_zookeeper_security_setting(std::string_view key);

// Throws config_exception naming the setting: set.acl without an identity (the nodes would be locked to none),
// a username without its password file or the other way round, a username with ':' (the digest's separator),
// and Kafka's ZooKeeper TLS and JAAS settings.
zookeeper_security_settings read_zookeeper_security(const std::map<std::string, std::string>& settings);

}  // namespace ferry::config
