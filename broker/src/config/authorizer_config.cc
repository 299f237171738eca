#include "config/authorizer_config.h"

#include <array>
#include <sstream>

#include "config/setting_text.h"

namespace ferry::config {
namespace {

constexpr std::string_view class_name_key = "authorizer.class.name";
constexpr std::string_view super_users_key = "super.users";
constexpr std::string_view allow_if_no_acl_key = "allow.everyone.if.no.acl.found";

constexpr std::array<std::string_view, 2> acl_authorizers{"kafka.security.authorizer.AclAuthorizer",
                                                          "org.apache.kafka.metadata.authorizer.StandardAuthorizer"};

std::vector<std::string> principals(const std::string& key, const std::string& value) {
  std::vector<std::string> out;
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ';');) {
    auto principal = setting_text::trim(item);
    if (principal.empty()) continue;
    const auto colon = principal.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == principal.size())
      setting_text::fail(key, value, "'" + principal + "' is not a principal of the form Type:name (User:admin)");
    out.push_back(std::move(principal));
  }
  return out;
}

}  // namespace

bool is_authorizer_setting(std::string_view key) {
  return key == class_name_key || key == super_users_key || key == allow_if_no_acl_key;
}

authorizer_settings read_authorizer_settings(const std::map<std::string, std::string>& settings) {
  authorizer_settings out;
  const auto get = [&settings](std::string_view key) -> const std::string* {
    const auto it = settings.find(std::string(key));
    return it == settings.end() ? nullptr : &it->second;
  };
  if (const auto* name = get(class_name_key)) {
    const auto trimmed = setting_text::trim(*name);
    if (!trimmed.empty()) {
      if (std::find(acl_authorizers.begin(), acl_authorizers.end(), trimmed) == acl_authorizers.end())
        setting_text::fail(std::string(class_name_key), *name,
                           "Ferry's authorizer is Kafka's ACL authorizer: set " + std::string(acl_authorizers[0]) +
                               " or " + std::string(acl_authorizers[1]) + ", or leave it empty for none");
      out.enabled = true;
    }
  }
  if (const auto* users = get(super_users_key)) {
    out.super_users = principals(std::string(super_users_key), *users);
    if (!out.enabled && !out.super_users.empty())
      setting_text::fail(std::string(super_users_key), *users, "has no effect without authorizer.class.name");
  }
  if (const auto* allow = get(allow_if_no_acl_key)) {
    out.allow_everyone_if_no_acl_found = setting_text::to_bool(std::string(allow_if_no_acl_key), *allow);
    if (!out.enabled)
      setting_text::fail(std::string(allow_if_no_acl_key), *allow, "has no effect without authorizer.class.name");
  }
  return out;
}

}  // namespace ferry::config
