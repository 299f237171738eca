#include "quota/quota_entity.h"

#include <algorithm>
#include <initializer_list>
#include <set>

namespace ferry::quota {
namespace {

std::string text_of(const entity_name& name) { return name.is_default ? std::string(default_entity_name) : name.name; }

refusal invalid(std::string message) { return {errc::invalid_request, std::move(message)}; }

// The entity as Kafka's ClientQuotaEntity.toString prints it, for the messages that name it.
std::string java_entity_text(std::span<const entity_component> entity) {
  std::string out = "ClientQuotaEntity(entries={";
  for (std::size_t i = 0; i < entity.size(); ++i) {
    if (i > 0) out += ", ";
    out += entity[i].entity_type + "=" + entity[i].name.value_or("null");
  }
  return out + "})";
}

bool part_matches(const std::optional<quota_filter::part>& wanted, const std::optional<entity_name>& name) {
  if (!wanted) return true;
  if (!name) return false;
  switch (wanted->match) {
    case match_type::exact:
      return !name->is_default && name->name == wanted->name;
    case match_type::default_entity:
      return name->is_default;
    case match_type::any:
      return true;
  }
  return false;
}

bool has_empty_name(const std::optional<entity_name>& name) { return name && !name->is_default && name->name.empty(); }

}  // namespace

std::string to_string(const quota_entity& entity) {
  std::string out;
  if (entity.user) out = "users/" + text_of(*entity.user);
  if (entity.client_id) out += (out.empty() ? "clients/" : "/clients/") + text_of(*entity.client_id);
  return out;
}

std::optional<quota_level> level_of(const quota_entity& entity) {
  if (entity.user && entity.client_id) {
    if (entity.user->is_default)
      return entity.client_id->is_default ? quota_level::default_user_default_client : quota_level::default_user_client;
    return entity.client_id->is_default ? quota_level::user_default_client : quota_level::user_client;
  }
  if (entity.user) return entity.user->is_default ? quota_level::default_user : quota_level::user;
  if (entity.client_id) return entity.client_id->is_default ? quota_level::default_client : quota_level::client;
  return std::nullopt;
}

quota_entity entity_at(quota_level level, std::string_view user, std::string_view client_id) {
  const auto named_user = entity_name::of(std::string(user));
  const auto named_client = entity_name::of(std::string(client_id));
  const auto any = entity_name::default_name();
  switch (level) {
    case quota_level::user_client:
      return {named_user, named_client};
    case quota_level::user_default_client:
      return {named_user, any};
    case quota_level::user:
      return {named_user, std::nullopt};
    case quota_level::default_user_client:
      return {any, named_client};
    case quota_level::default_user_default_client:
      return {any, any};
    case quota_level::default_user:
      return {any, std::nullopt};
    case quota_level::client:
      return {std::nullopt, named_client};
    case quota_level::default_client:
      return {std::nullopt, any};
  }
  return {};
}

bool quota_filter::matches(const quota_entity& entity) const {
  if (ip) return false;
  if (strict) {
    const int parts = (entity.user ? 1 : 0) + (entity.client_id ? 1 : 0);
    const int wanted = (user ? 1 : 0) + (client_id ? 1 : 0);
    if (parts != wanted) return false;
  }
  return part_matches(user, entity.user) && part_matches(client_id, entity.client_id);
}

std::variant<quota_filter, refusal> check_filter(std::span<const filter_component> components, bool strict) {
  quota_filter filter;
  filter.strict = strict;
  std::set<std::string_view> seen;
  for (const auto& c : components) {
    if (c.entity_type.empty()) return invalid("Invalid empty entity type.");
    if (!seen.insert(c.entity_type).second)
      return invalid("Entity type " + c.entity_type + " cannot appear more than once in the filter.");
    if (c.entity_type != user_entity_type && c.entity_type != client_id_entity_type && c.entity_type != ip_entity_type)
      return refusal{errc::unsupported_entity_type, "Unsupported entity type " + c.entity_type};
    switch (c.match) {
      case match_type::exact:
        if (!c.match_name) return invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.");
        break;
      case match_type::default_entity:
        if (c.match_name) return invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
        break;
      case match_type::any:
        if (c.match_name) return invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
        break;
      default:
        return invalid("Unknown match type " + std::to_string(static_cast<int>(c.match)));
    }
    quota_filter::part part{c.match, c.match_name.value_or("")};
    if (c.entity_type == user_entity_type)
      filter.user = std::move(part);
    else if (c.entity_type == client_id_entity_type)
      filter.client_id = std::move(part);
    else
      filter.ip = true;
  }
  if (filter.ip && (filter.user || filter.client_id))
    return invalid(
        "Invalid entity filter component combination. IP filter component should not be used with user or clientId "
        "filter component.");
  return filter;
}

std::variant<quota_alteration, refusal> check_alteration(std::span<const entity_component> entity,
                                                         std::span<const quota_op> ops) {
  std::set<std::string_view> keys;
  for (const auto& op : ops)
    if (!keys.insert(op.key).second)
      return invalid("Duplicate quota key " + op.key + " not updating quota for this entity " +
                     java_entity_text(entity));

  if (entity.empty()) return invalid("Invalid empty client quota entity");
  quota_alteration out;
  std::set<std::string_view> types;
  bool ip = false;
  for (const auto& c : entity) {
    if (!types.insert(c.entity_type).second)
      return invalid("Invalid client quota entity, duplicate entity entry " + c.entity_type);
    auto name = c.name ? entity_name::of(*c.name) : entity_name::default_name();
    if (c.entity_type == user_entity_type)
      out.entity.user = std::move(name);
    else if (c.entity_type == client_id_entity_type)
      out.entity.client_id = std::move(name);
    else if (c.entity_type == ip_entity_type)
      ip = true;
    else
      return invalid("Unhandled client quota entity type: " + c.entity_type);
    if (c.name && c.name->empty()) return invalid("Empty " + c.entity_type + " not supported");
  }
  if (ip && (out.entity.user || out.entity.client_id))
    return invalid("Invalid quota entity combination, IP entity should not be used with user/client ID entity.");
  if (ip)
    return invalid("Ferry does not enforce " + std::string(connection_creation_rate) +
                   ": quotas on ip entities are not supported");

  for (const auto& op : ops) {
    const auto key = parse_quota_key(op.key);
    if (op.remove) {
      if (key) out.changes.push_back({*key, std::nullopt});
      continue;
    }
    if (auto refused = check_value(op.key, op.value)) return std::move(*refused);
    if (key) out.changes.push_back({*key, op.value});
  }
  return out;
}

quota_values apply(quota_values values, std::span<const quota_change> changes) {
  for (const auto& change : changes) {
    if (change.value)
      values[change.key] = *change.value;
    else
      values.erase(change.key);
  }
  return values;
}

quota_table::quota_table(quota_entries entries) : entries_(std::move(entries)) {
  std::erase_if(entries_, [](const auto& entry) {
    const auto& [entity, values] = entry;
    return values.empty() || !level_of(entity) || has_empty_name(entity.user) || has_empty_name(entity.client_id);
  });
  for (const auto& [entity, values] : entries_) {
    key_bounds* slot = nullptr;
    if (entity.user) {
      user_levels& levels = entity.user->is_default ? default_user_ : users_[entity.user->name];
      if (!entity.client_id)
        slot = &levels.alone;
      else
        slot = entity.client_id->is_default ? &levels.default_client : &levels.clients[entity.client_id->name];
      kinds_ |= entity.client_id ? user_client_kind : user_kind;
    } else {
      slot = entity.client_id->is_default ? &default_client_ : &clients_[entity.client_id->name];
      kinds_ |= client_kind;
    }
    for (const auto& [key, value] : values) (*slot)[static_cast<std::size_t>(key)] = value;
  }
}

std::optional<double> quota_table::bound_at(quota_level level, std::string_view user, std::string_view client_id,
                                            quota_key key) const {
  const auto k = static_cast<std::size_t>(key);
  const auto in_clients = [&](const by_name<key_bounds>& clients) -> std::optional<double> {
    const auto it = clients.find(client_id);
    return it == clients.end() ? std::nullopt : it->second[k];
  };
  const auto named_user = users_.find(user);
  const user_levels* levels = named_user == users_.end() ? nullptr : &named_user->second;
  switch (level) {
    case quota_level::user_client:
      return levels != nullptr ? in_clients(levels->clients) : std::nullopt;
    case quota_level::user_default_client:
      return levels != nullptr ? levels->default_client[k] : std::nullopt;
    case quota_level::user:
      return levels != nullptr ? levels->alone[k] : std::nullopt;
    case quota_level::default_user_client:
      return in_clients(default_user_.clients);
    case quota_level::default_user_default_client:
      return default_user_.default_client[k];
    case quota_level::default_user:
      return default_user_.alone[k];
    case quota_level::client:
      return in_clients(clients_);
    case quota_level::default_client:
      return default_client_[k];
  }
  return std::nullopt;
}

// DefaultQuotaCallback.quotaMetricTags.
metric_tags quota_table::tags_for(std::string_view user, std::string_view client_id, quota_key key) const {
  switch (kinds_) {
    case no_kinds:
    case client_kind:
      return {{}, client_id};
    case user_kind:
      return {user, {}};
    case user_client_kind:
      return {user, client_id};
    default:
      break;
  }
  using level = quota_level;
  if (has(level::user_client, user, client_id, key) || has(level::user_default_client, user, client_id, key))
    return {user, client_id};
  if (has(level::user, user, client_id, key)) return {user, {}};
  if (has(level::default_user_client, user, client_id, key) ||
      has(level::default_user_default_client, user, client_id, key))
    return {user, client_id};
  if (has(level::default_user, user, client_id, key)) return {user, {}};
  return {{}, client_id};
}

// DefaultQuotaCallback.quotaLimit: the tags alone say which levels to look at.
std::optional<double> quota_table::limit_for(const metric_tags& tags, quota_key key) const {
  using level = quota_level;
  const auto first = [&](std::initializer_list<quota_level> levels) -> std::optional<double> {
    for (const quota_level at : levels)
      if (auto bound = bound_at(at, tags.user, tags.client_id, key)) return bound;
    return std::nullopt;
  };
  if (!tags.user.empty() && !tags.client_id.empty())
    return first({level::user_client, level::user_default_client, level::default_user_client,
                  level::default_user_default_client});
  if (!tags.user.empty()) return first({level::user, level::default_user});
  if (!tags.client_id.empty()) return first({level::client, level::default_client});
  return std::nullopt;
}

quota_resolution quota_table::resolve(std::string_view user, std::string_view client_id, quota_key key) const {
  const metric_tags tags = tags_for(user, client_id, key);
  return {limit_for(tags, key), tags};
}

quota_entries quota_table::select(const quota_filter& filter) const {
  quota_entries out;
  for (const auto& [entity, values] : entries_)
    if (filter.matches(entity)) out.emplace(entity, values);
  return out;
}

}  // namespace ferry::quota
