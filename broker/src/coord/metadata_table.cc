#include "coord/metadata_table.h"

#include <algorithm>
#include <charconv>

#include "base/log.h"
#include "coord/acl_layout.h"
#include "coord/acl_store.h"
#include "coord/errc.h"

namespace ferry::coord {
namespace {

std::string children_key(std::string_view path) { return "c:" + std::string(path); }
std::string data_key(std::string_view path) { return "d:" + std::string(path); }

// The broker id a child of /brokers/ids or /ferry/controlled_shutdown is named after, if it is one.
std::optional<broker_id> broker_id_of(std::string_view child) {
  std::int32_t id = 0;
  const auto [end, ec] = std::from_chars(child.data(), child.data() + child.size(), id);
  if (ec != std::errc{} || end != child.data() + child.size()) return std::nullopt;
  return broker_id{id};
}

}  // namespace

std::optional<std::string> assignment_problem(const layout::topic_assignment& assignment) {
  if (assignment.partitions.empty()) return "it assigns no partitions";
  for (const auto& [p, replicas] : assignment.partitions) {
    const std::string where = "partition " + std::to_string(p.value());
    if (replicas.empty()) return where + " has no replicas";
    auto sorted = replicas;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.front().value() < 0) return where + " names a negative broker id";
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return where + " names a broker twice";
  }
  // A reassignment in progress: adding and removing replicas are assigned replicas, never both, and at least one
  // replica stays (the target).
  for (const auto* moving : {&assignment.adding, &assignment.removing}) {
    for (const auto& [p, ids] : *moving) {
      const std::string where = "partition " + std::to_string(p.value());
      const auto it = assignment.partitions.find(p);
      if (it == assignment.partitions.end()) return where + " is being reassigned but does not exist";
      for (const auto id : ids)
        if (std::find(it->second.begin(), it->second.end(), id) == it->second.end())
          return where + " is being reassigned with broker " + std::to_string(id.value()) +
                 ", which is not among its replicas";
    }
  }
  for (const auto& [p, removing] : assignment.removing) {
    const std::string where = "partition " + std::to_string(p.value());
    if (removing.size() >= assignment.partitions.at(p).size()) return where + " would be left with no replicas";
    if (const auto adding = assignment.adding.find(p); adding != assignment.adding.end())
      for (const auto id : removing)
        if (std::find(adding->second.begin(), adding->second.end(), id) != adding->second.end())
          return where + " is both adding and removing broker " + std::to_string(id.value());
  }
  return std::nullopt;
}

void metadata_table::forget_fired(const std::vector<std::string>& keys) {
  for (const auto& key : keys) armed_.erase(key);
}

watcher metadata_table::watch_for(task t, std::string key) const {
  return [enqueue = enqueue_, t = std::move(t), key = std::move(key)](watch_event, const std::string&) {
    enqueue(t, key);
  };
}

result<std::optional<node_data>> metadata_table::read_watched(const std::string& path, const task& t,
                                                              bool watch_creation) {
  const std::string key = data_key(path);
  const bool arm = !armed_.contains(key);
  auto got = session_.get(path, arm ? watch_for(t, key) : watcher{});
  if (got) {
    if (arm) armed_.insert(key);
    return std::optional<node_data>(std::move(got).value());
  }
  if (got.error() != errc::no_node) return got.error();
  if (!watch_creation || !arm) return std::optional<node_data>{};
  // A failed get sets no watch; exists does, and fires when the node is created.
  FERRY_TRY(const auto stat, session_.exists(path, watch_for(t, key)));
  armed_.insert(key);
  if (!stat) return std::optional<node_data>{};
  auto again = session_.get(path);
  if (!again) {
    if (again.error() == errc::no_node) return std::optional<node_data>{};
    return again.error();
  }
  return std::optional<node_data>(std::move(again).value());
}

result<void> metadata_table::resync() {
  FERRY_TRY(refresh_deletions());
  FERRY_TRY(refresh_shutting_down());
  FERRY_TRY(refresh_offline_replicas());
  // Notifications first: every config and state read after this point is at least as new as they are.
  FERRY_TRY(refresh_config_changes(true));
  FERRY_TRY(refresh_state_changes(true));
  FERRY_TRY(refresh_broker_configs());
  FERRY_TRY(refresh_user_configs());
  return refresh_topics(true);
}

result<void> metadata_table::refresh_brokers(broker_id self, const std::function<result<void>()>& reregister) {
  const std::string parent(layout::brokers_ids_path);
  FERRY_TRY(const auto children, read_children_watched(parent, task_kind::brokers));

  std::map<broker_id, broker_info> brokers;
  for (const auto& child : children) {
    const auto id = broker_id_of(child);
    if (!id) continue;
    auto got = session_.get(layout::child_path(parent, child));
    if (!got) {
      if (got.error() == errc::no_node) continue;  // left meanwhile
      return got.error();
    }
    auto registration = layout::decode_broker(got.value().data);
    if (!registration) {
      FERRY_LOG(warn, "coord") << "ignoring broker " << child << ": malformed registration " << got.value().data;
      continue;
    }
    auto& r = registration.value();
    brokers.emplace(*id, broker_info{*id, std::move(r.host), r.port, std::move(r.rack), std::move(r.endpoints),
                                     got.value().stat.czxid, std::move(r.schema_registry)});
  }
  model_.brokers = std::move(brokers);
  // Someone deleted our registration while our session lives on: put it back.
  if (self != no_broker && !model_.brokers.contains(self)) {
    FERRY_LOG(warn, "coord") << "registration of broker " << self << " disappeared; registering again";
    FERRY_TRY(reregister());
    return refresh_brokers(self, reregister);
  }
  return success();
}

result<void> metadata_table::refresh_deletions() {
  FERRY_TRY(auto children, read_children_watched(layout::delete_topics_path, task_kind::deletions));
  deletion_markers_ = std::set<std::string, std::less<>>(children.begin(), children.end());
  for (auto& [name, topic] : model_.topics)
    topic.marked_for_deletion = deletion_enabled_ && deletion_markers_.contains(name);
  return success();
}

result<std::set<broker_id>> metadata_table::deletion_acknowledgements(const std::string& topic) {
  FERRY_TRY(const auto children, read_children_watched(layout::delete_topic_path(topic), task_kind::reconcile));
  std::set<broker_id> acknowledged;
  for (const auto& child : children) {
    if (const auto id = broker_id_of(child)) acknowledged.insert(*id);
  }
  return acknowledged;
}

result<void> metadata_table::refresh_shutting_down() {
  FERRY_TRY(const auto children, read_children_watched(layout::controlled_shutdown_path, task_kind::shutting_down));
  model_.shutting_down.clear();
  for (const auto& child : children) {
    if (const auto id = broker_id_of(child)) model_.shutting_down.insert(*id);
  }
  return success();
}

result<void> metadata_table::refresh_offline_replicas() {
  const std::string parent(layout::offline_replicas_path);
  auto listed = read_children_watched(parent, task_kind::offline_replicas);
  // A cluster whose brokers predate the node (the operator may watch one): nothing is reported offline.
  if (!listed && listed.error() == errc::no_node) {
    model_.offline_replicas.clear();
    return success();
  }
  FERRY_TRY(const auto children, std::move(listed));
  std::map<broker_id, std::set<topic_partition>> offline;
  for (const auto& child : children) {
    const auto id = layout::offline_replicas_broker(child);
    if (!id) continue;
    // Written once, when the dir went offline, and gone with the broker's session: no data watch needed.
    auto got = session_.get(layout::child_path(parent, child));
    if (!got) {
      if (got.error() == errc::no_node) continue;
      return got.error();
    }
    auto partitions = layout::decode_offline_replicas(got.value().data);
    if (!partitions) {
      FERRY_LOG(warn, "coord") << "ignoring " << parent << "/" << child << ": malformed " << got.value().data;
      continue;
    }
    offline[*id].insert(partitions.value().begin(), partitions.value().end());
  }
  model_.offline_replicas = std::move(offline);
  return success();
}

result<void> metadata_table::refresh_topics(bool full) {
  FERRY_TRY(const auto children, read_children_watched(layout::brokers_topics_path, task_kind::topics));

  const std::set<std::string, std::less<>> names(children.begin(), children.end());
  std::vector<std::string> gone;
  for (const auto& [name, topic] : model_.topics) {
    if (!names.contains(name)) gone.push_back(name);
  }
  for (const auto& name : gone) drop_topic(name);
  for (const auto& name : names) {
    if (full || !model_.topics.contains(name)) {
      FERRY_TRY(refresh_topic(name, full));
    }
  }
  return success();
}

result<void> metadata_table::refresh_topic(const std::string& name, bool full) {
  FERRY_TRY(auto got, read_watched(layout::topic_path(name), task{task_kind::topic, name}, false));
  if (!got) {
    drop_topic(name);
    return success();
  }
  const auto existing = model_.topics.find(name);
  const bool is_new = existing == model_.topics.end();
  auto assignment = layout::decode_topic(got->data);
  if (!assignment) return mark_invalid(name, "it is malformed: " + got->data, got->stat.version, is_new || full);
  if (auto problem = assignment_problem(assignment.value()))
    return mark_invalid(name, std::move(*problem), got->stat.version, is_new || full);

  // Built aside and committed whole, so a failed read leaves the model as it was for the retry.
  topic_info updated = is_new ? topic_info{} : existing->second;
  if (!updated.invalid.empty())
    FERRY_LOG(info, "coord") << "topic " << name << ": " << layout::topic_path(name) << " is readable again";
  updated.invalid.clear();
  updated.topic_id = assignment.value().topic_id;
  updated.marked_for_deletion = deletion_enabled_ && deletion_markers_.contains(name);

  std::vector<partition_id> removed;
  for (const auto& [p, info] : updated.partitions) {
    if (!assignment.value().partitions.contains(p)) removed.push_back(p);
  }
  for (const auto p : removed) updated.partitions.erase(p);
  for (auto& [p, replicas] : assignment.value().partitions) {
    const bool known = updated.partitions.contains(p);
    auto& partition = updated.partitions[p];
    partition.replicas = std::move(replicas);
    const auto adding = assignment.value().adding.find(p);
    partition.adding = adding == assignment.value().adding.end() ? std::vector<broker_id>{} : adding->second;
    const auto removing = assignment.value().removing.find(p);
    partition.removing = removing == assignment.value().removing.end() ? std::vector<broker_id>{} : removing->second;
    if (!known || full) {
      FERRY_TRY(partition.state, read_partition_state(name, p));
    }
  }
  if (is_new || full) {
    FERRY_TRY(updated.config, read_config(name));
  }
  model_.topics[name] = std::move(updated);
  topic_versions_[name] = got->stat.version;
  return success();
}

result<void> metadata_table::mark_invalid(const std::string& name, std::string why, std::int32_t version,
                                          bool read_config_too) {
  auto& topic = model_.topics[name];
  if (topic.invalid != why) {
    FERRY_LOG(warn, "coord") << "topic " << name << " has no usable assignment (" << layout::topic_path(name) << ": "
                             << why << "); it has no leaders until the znode is fixed, and no data is deleted";
  }
  if (read_config_too) {
    FERRY_TRY(topic.config, read_config(name));
  }
  topic.invalid = std::move(why);
  topic.partitions.clear();
  topic.marked_for_deletion = deletion_enabled_ && deletion_markers_.contains(name);
  topic_versions_[name] = version;
  return success();
}

result<std::optional<partition_state>> metadata_table::read_partition_state(const std::string& name, partition_id p) {
  const auto path = layout::partition_state_path(name, p);
  auto got = session_.get(path);
  if (!got) {
    if (got.error() == errc::no_node) return std::optional<partition_state>{};
    return got.error();
  }
  auto state = layout::decode_partition_state(got.value().data);
  if (!state) {
    FERRY_LOG(warn, "coord") << "ignoring malformed " << path << ": " << got.value().data;
    return std::optional<partition_state>{};
  }
  auto& s = state.value();
  return std::optional<partition_state>(partition_state{s.leader, s.epoch, std::move(s.isr), s.controller_epoch,
                                                        got.value().stat.version, got.value().stat.mzxid});
}

result<void> metadata_table::refresh_partition_state(const std::string& name, partition_id p) {
  const auto topic = model_.topics.find(name);
  if (topic == model_.topics.end() || !topic->second.partitions.contains(p)) return success();
  FERRY_TRY(auto state, read_partition_state(name, p));
  topic->second.partitions[p].state = std::move(state);
  return success();
}

result<void> metadata_table::apply_state_change(layout::partition_state_change change, std::int64_t written_zxid) {
  const auto topic = model_.topics.find(change.topic);
  // A topic or partition not in the model yet gets its state when it is read.
  if (topic == model_.topics.end()) return success();
  const auto partition = topic->second.partitions.find(change.partition);
  if (partition == topic->second.partitions.end()) return success();
  // A change of an older topic of that name, or of one whose id the model has not read yet: the znode decides.
  if (topic->second.topic_id != change.topic_id) return refresh_partition_state(change.topic, change.partition);
  auto& state = partition->second.state;
  if (state && state->zk_version > change.state_version) return success();  // read directly, already newer
  // The same version: the controller's own copy of what it wrote, which gets the exact zxid.
  if (state && state->zk_version == change.state_version) {
    state->written_zxid = written_zxid;
    return success();
  }
  auto& s = change.state;
  state = partition_state{s.leader, s.epoch, std::move(s.isr), s.controller_epoch, change.state_version, written_zxid};
  return success();
}

result<std::vector<std::string>> metadata_table::refresh_state_changes(bool skip_existing) {
  return read_new_notifications(
      {layout::partition_state_changes_path, task_kind::state_changes, layout::partition_state_change_sequence},
      last_state_change_, skip_existing, [this](const std::string& child, const node_data& node) -> result<void> {
        auto decoded = layout::decode_partition_state_changes(node.data);
        if (!decoded) {
          FERRY_LOG(warn, "coord") << "ignoring malformed partition state change " << child << ": " << node.data;
          return success();
        }
        // The change node was created in the multi-op that wrote the states: its czxid is their mzxid.
        for (auto& change : decoded.value()) {
          FERRY_TRY(apply_state_change(std::move(change), node.stat.czxid));
        }
        return success();
      });
}

result<std::optional<layout::config_map>> metadata_table::read_entity_config(const std::string& path) {
  auto got = session_.get(path);
  if (!got) {
    if (got.error() != errc::no_node) return got.error();
    return std::optional<layout::config_map>{};
  }
  auto config = layout::decode_entity_config(got.value().data);
  if (!config) {
    FERRY_LOG(warn, "coord") << "ignoring malformed " << path << ": " << got.value().data;
    return std::optional<layout::config_map>{};
  }
  return std::optional<layout::config_map>(std::move(config).value());
}

result<layout::config_map> metadata_table::read_config(const std::string& name) {
  FERRY_TRY(auto config, read_entity_config(layout::topic_config_path(name)));
  return config ? std::move(*config) : layout::config_map{};
}

result<void> metadata_table::read_broker_config(const std::string& entity) {
  // A broker id or <default>; anything else is not a path any broker reads.
  const bool valid = entity == layout::default_broker_entity ||
                     (!entity.empty() && entity.size() <= 10 &&
                      std::all_of(entity.begin(), entity.end(), [](char c) { return c >= '0' && c <= '9'; }));
  if (!valid) {
    FERRY_LOG(warn, "coord") << "ignoring dynamic config of broker entity '" << entity << "'";
    return success();
  }
  FERRY_TRY(auto config, read_entity_config(layout::entity_config_path("brokers", entity)));
  if (config)
    model_.broker_configs[entity] = std::move(*config);
  else
    model_.broker_configs.erase(entity);
  return success();
}

result<void> metadata_table::refresh_broker_configs() {
  auto children = session_.get_children(std::string(layout::config_brokers_path));
  if (!children) {
    if (children.error() != errc::no_node) return children.error();
    model_.broker_configs.clear();
    return success();
  }
  model_.broker_configs.clear();
  for (const auto& entity : children.value()) {
    FERRY_TRY(read_broker_config(entity));
  }
  return success();
}

result<void> metadata_table::read_user_config(const std::string& sanitized) {
  auto name = layout::desanitize(sanitized);
  if (!name) {
    FERRY_LOG(warn, "coord") << "ignoring " << layout::config_users_path << "/" << sanitized
                             << ": not a sanitized user name";
    return success();
  }
  FERRY_TRY(auto config, read_entity_config(layout::entity_config_path("users", sanitized)));
  if (config)
    model_.users[*name] = std::move(*config);
  else
    model_.users.erase(*name);
  return success();
}

result<void> metadata_table::refresh_user_configs() {
  auto children = session_.get_children(std::string(layout::config_users_path));
  if (!children && children.error() != errc::no_node) return children.error();
  model_.users.clear();
  model_.client_quotas.clear();
  FERRY_TRY(read_client_quotas(std::nullopt));
  if (!children) return success();
  for (const auto& sanitized : children.value()) {
    FERRY_TRY(read_user_config(sanitized));
    FERRY_TRY(read_client_quotas(sanitized));
  }
  return success();
}

namespace {

// The node of a client quota entity: /config/clients/<c> or /config/users/<u>/clients/<c> (sanitized names).
std::string client_quota_path(const std::optional<std::string>& user, std::string_view client) {
  if (!user) return layout::entity_config_path("clients", client);
  return layout::entity_config_path("users", *user + "/clients/" + std::string(client));
}

// "<default>" is stored as it is; other names are sanitized.
std::optional<std::string> entity_name(std::string_view stored) {
  if (stored == layout::default_entity) return std::string(stored);
  return layout::desanitize(stored);
}

}  // namespace

result<void> metadata_table::read_client_quotas(const std::optional<std::string>& user) {
  const std::string parent =
      user ? layout::entity_config_path("users", *user + "/clients") : std::string(layout::config_clients_path);
  auto children = session_.get_children(parent);
  if (!children) {
    if (children.error() == errc::no_node) return success();
    return children.error();
  }
  for (const auto& client : children.value()) {
    FERRY_TRY(read_client_quota(user, client));
  }
  return success();
}

result<void> metadata_table::read_client_quota(const std::optional<std::string>& user, const std::string& client) {
  const auto path = client_quota_path(user, client);
  const auto client_name = entity_name(client);
  const auto user_name = user ? entity_name(*user) : std::optional<std::string>();
  if (!client_name || (user && !user_name)) {
    FERRY_LOG(warn, "coord") << "ignoring " << path << ": not a sanitized name";
    return success();
  }
  FERRY_TRY(auto config, read_entity_config(path));
  const std::pair key{user_name, *client_name};
  if (config)
    model_.client_quotas[key] = std::move(*config);
  else
    model_.client_quotas.erase(key);
  return success();
}

result<std::vector<std::string>> metadata_table::read_children_watched(std::string_view parent, task_kind kind) {
  const std::string key = children_key(parent);
  const bool arm = !armed_.contains(key);
  FERRY_TRY(auto children, session_.get_children(std::string(parent), arm ? watch_for(task{kind}, key) : watcher{}));
  if (arm) armed_.insert(key);
  return children;
}

result<std::vector<std::string>> metadata_table::read_new_notifications(
    const notification_log& log, std::int64_t& last_seen, bool skip_existing,
    const std::function<result<void>(const std::string& child, const node_data& node)>& apply) {
  FERRY_TRY(auto children, read_children_watched(log.parent, log.kind));
  std::vector<std::pair<std::int64_t, std::string>> numbered;
  for (auto& child : children) {
    if (const auto seq = log.sequence(child)) numbered.emplace_back(*seq, std::move(child));
  }
  std::sort(numbered.begin(), numbered.end());
  for (const auto& [seq, child] : numbered) {
    if (seq <= last_seen) continue;
    if (!skip_existing) {
      auto got = session_.get(layout::child_path(log.parent, child));
      if (!got && got.error() != errc::no_node) return got.error();
      if (got) {
        FERRY_TRY(apply(child, got.value()));
      }
    }
    last_seen = seq;
  }
  std::vector<std::string> names;
  names.reserve(numbered.size());
  for (auto& [seq, child] : numbered) names.push_back(std::move(child));
  return names;
}

result<std::vector<std::string>> metadata_table::refresh_config_changes(bool skip_existing) {
  return read_new_notifications(
      {layout::config_changes_path, task_kind::config_changes, layout::config_change_sequence}, last_config_change_,
      skip_existing, [this](const std::string& child, const node_data& node) -> result<void> {
        auto change = layout::decode_config_change(node.data);
        if (!change) {
          FERRY_LOG(warn, "coord") << "ignoring malformed config change " << child << ": " << node.data;
          return success();
        }
        const auto& name = change.value().entity_name;
        if (change.value().entity_type == "brokers") return read_broker_config(name);
        if (change.value().entity_type == "clients") return read_client_quota(std::nullopt, name);
        // "users/<user>/clients/<client>" is the quota of a user's client id, not the user's entity.
        if (change.value().entity_type == "users") {
          constexpr std::string_view clients = "/clients/";
          const auto split = name.find(clients);
          if (split != std::string::npos)
            return read_client_quota(name.substr(0, split), name.substr(split + clients.size()));
          if (name.find('/') != std::string::npos) return success();
          return read_user_config(name);
        }
        if (change.value().entity_type != "topics") return success();
        const auto topic = model_.topics.find(change.value().entity_name);
        // A topic not in the model yet gets its config when it is read.
        if (topic == model_.topics.end()) return success();
        FERRY_TRY(topic->second.config, read_config(topic->first));
        return success();
      });
}

result<void> metadata_table::refresh_acls() {
  // Notifications first, as for configs: every node read after this is at least as new as they are.
  for (const auto pattern : {authz::pattern_type::literal, authz::pattern_type::prefixed}) {
    auto& last_seen = pattern == authz::pattern_type::literal ? last_acl_change_ : last_extended_acl_change_;
    FERRY_TRY(read_new_notifications(
        {layout::acl_changes_path(pattern),
         pattern == authz::pattern_type::literal ? task_kind::acl_changes : task_kind::extended_acl_changes,
         layout::acl_change_sequence},
        last_seen, true, {}));
  }
  std::vector<std::string> unreadable;
  FERRY_TRY(auto bindings, acl_store(session_).read_all(&unreadable));
  for (const auto& path : unreadable)
    FERRY_LOG(error, "coord") << "ignoring the ACLs of " << path << ": the node does not decode";
  acls_.clear();
  for (auto& b : bindings) acls_[b.resource].push_back(std::move(b.entry));
  publish_acls();
  return success();
}

result<std::vector<std::string>> metadata_table::refresh_acl_changes(authz::pattern_type pattern) {
  const bool extended = pattern == authz::pattern_type::prefixed;
  bool changed = false;
  auto names = read_new_notifications(
      {layout::acl_changes_path(pattern), extended ? task_kind::extended_acl_changes : task_kind::acl_changes,
       layout::acl_change_sequence},
      extended ? last_extended_acl_change_ : last_acl_change_, false,
      [&](const std::string& child, const node_data& node) -> result<void> {
        auto resource = layout::decode_acl_change(node.data, extended);
        if (!resource) {
          FERRY_LOG(warn, "coord") << "ignoring malformed ACL change " << child << ": " << node.data;
          return success();
        }
        FERRY_TRY(const bool read, read_acls(resource.value()));
        changed = changed || read;
        return success();
      });
  // Published once for the whole batch, even when a later read failed (the task is retried from there).
  if (changed) publish_acls();
  return names;
}

result<bool> metadata_table::read_acls(const authz::resource_pattern& resource) {
  auto entries = acl_store(session_).read(resource);
  if (!entries) {
    if (entries.error() != errc::invalid_data) return entries.error();
    FERRY_LOG(error, "coord") << "keeping the ACLs known for " << layout::acl_path(resource)
                              << ": the node no longer decodes";
    return false;
  }
  if (entries.value().empty())
    acls_.erase(resource);
  else
    acls_[resource] = std::move(entries).value();
  return true;
}

void metadata_table::publish_acls() {
  std::vector<authz::acl_binding> bindings;
  for (const auto& [resource, entries] : acls_)
    for (const auto& e : entries) bindings.push_back({resource, e});
  model_.acls = std::make_shared<const authz::acl_snapshot>(bindings);
}

void metadata_table::drop_topic(const std::string& name) {
  const auto topic = model_.topics.find(name);
  if (topic == model_.topics.end()) return;
  model_.topics.erase(topic);
  topic_versions_.erase(name);
}

}  // namespace ferry::coord
