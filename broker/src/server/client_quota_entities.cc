#include "server/client_quota_entities.h"

#include "base/log.h"

namespace ferry::server {
namespace {

quota::entity_name name_of(const std::string& stored) {
  return stored == coord::layout::default_entity ? quota::entity_name::default_name() : quota::entity_name::of(stored);
}

std::string stored_name(const quota::entity_name& name) {
  return name.is_default ? std::string(coord::layout::default_entity) : coord::layout::sanitize(name.name);
}

void add_values(quota::quota_entries& out, const quota::quota_entity& entity, const coord::layout::config_map& config) {
  quota::quota_values values;
  for (const auto& [key, text] : config) {
    const auto parsed_key = quota::parse_quota_key(key);
    if (!parsed_key) continue;  // SCRAM credentials beside a user's quotas
    const auto value = quota::parse_stored_value(*parsed_key, text);
    if (!value) {
      FERRY_LOG_LIMITED(warn, "quota", 60000) << "ignoring the quota " << key << "='" << text << "' of "
                                              << quota::to_string(entity) << ": " << value.error().message();
      continue;
    }
    values[*parsed_key] = value.value();
  }
  if (!values.empty()) out[entity] = std::move(values);
}

}  // namespace

quota::quota_entries client_quota_entries(const coord::cluster_view& view) {
  quota::quota_entries out;
  for (const auto& [user, config] : view.users) add_values(out, {name_of(user), std::nullopt}, config);
  for (const auto& [key, config] : view.client_quotas) {
    const auto& [user, client] = key;
    add_values(out, {user ? std::optional(name_of(*user)) : std::nullopt, name_of(client)}, config);
  }
  return out;
}

std::pair<std::string, std::string> config_entity_of(const quota::quota_entity& entity) {
  if (!entity.user) return {"clients", stored_name(*entity.client_id)};
  if (!entity.client_id) return {"users", stored_name(*entity.user)};
  return {"users", stored_name(*entity.user) + "/clients/" + stored_name(*entity.client_id)};
}

}  // namespace ferry::server
