#include "config/zookeeper_security.h"

#include <array>

#include "config/listeners.h"
#include "config/setting_text.h"

namespace ferry::config {
namespace {

constexpr std::string_view set_acl_key = "zookeeper.set.acl";
constexpr std::string_view username_key = "zookeeper.digest.username";
constexpr std::string_view password_file_key = "zookeeper.digest.password.file";

// Kafka's ZooKeeper client settings that Ferry does not serve, by prefix, with the reason given when one is set.
struct unserved {
  std::string_view prefix;
  std::string_view why;
};
constexpr std::array<unserved, 4> unserved_settings{{
    {"zookeeper.ssl.", "ZooKeeper over TLS is not served: Ferry logs in with zookeeper.digest.username"},
    {"zookeeper.clientCnxnSocket", "a Java ZooKeeper client setting: Ferry uses the ZooKeeper C client"},
    {"zookeeper.sasl.", "ZooKeeper SASL (JAAS) is not served: Ferry logs in with zookeeper.digest.username"},
    {"zookeeper.client.", "a Java ZooKeeper client setting: Ferry uses the ZooKeeper C client"},
}};

}  // namespace

bool is_zookeeper_security_setting(std::string_view key) {
  if (key == set_acl_key || key == username_key || key == password_file_key) return true;
  for (const auto& u : unserved_settings)
    if (key.starts_with(u.prefix)) return true;
  return false;
}

zookeeper_security_settings read_zookeeper_security(const std::map<std::string, std::string>& settings) {
  zookeeper_security_settings out;
  for (const auto& [key, value] : settings)
    for (const auto& u : unserved_settings)
      if (key.starts_with(u.prefix)) setting_text::fail(key, value, std::string(u.why));
  const auto get = [&settings](std::string_view key) -> std::string {
    const auto it = settings.find(std::string(key));
    return it == settings.end() ? std::string() : setting_text::trim(it->second);
  };
  if (const auto it = settings.find(std::string(set_acl_key)); it != settings.end())
    out.set_acl = setting_text::to_bool(it->first, setting_text::trim(it->second));
  out.digest_username = get(username_key);
  out.digest_password_file = get(password_file_key);
  if (out.digest_username.find(':') != std::string::npos)
    setting_text::fail(std::string(username_key), out.digest_username, "must not contain ':'");
  if (out.digest_username.empty() != out.digest_password_file.empty())
    throw config_exception("'" + std::string(username_key) + "' and '" + std::string(password_file_key) +
                           "' go together: set both or neither");
  if (out.set_acl && out.digest_username.empty())
    throw config_exception("'" + std::string(set_acl_key) +
                           "' is true but the broker has no ZooKeeper identity to lock the nodes to: set '" +
                           std::string(username_key) + "' and '" + std::string(password_file_key) + "'");
  return out;
}

}  // namespace ferry::config
