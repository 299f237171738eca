#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "authz/acl.h"
#include "base/result.h"
#include "coord/cluster_view.h"
#include "coord/registry_task.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// The cluster as this broker reads it from ZooKeeper: brokers, topics and their assignments, partition
// states, topic, broker and user configs and deletion markers, kept in a cluster_view model that the registry
// publishes. Every read sets its watch once; a fired watch comes back as a task (task_sink) and the worker calls the
// matching refresh_*.
//
// Partition states are not watched one by one: a broker would hold a watch per partition of the cluster.
// Every write of a state znode creates, in the same multi-op, a node in /ferry/partition_state_changes
// carrying the states written (layout::partition_state_change); the table watches that one parent and
// applies the changes in order, so a leader election costs each broker one read per multi-op, not one per
// partition. A full read (resync: start, new session) reads every state znode.
//
// A topic znode that does not decode, or that assigns no partitions or an impossible replica list, stays in
// the model marked invalid (topic_info::invalid) with no partitions: the brokers stop leading it, but keep
// its data, because a znode someone mangled is no reason to delete anything.
//
// Worker-thread only (not thread-safe).
class metadata_table {
 public:
  // `deletion_enabled`: the broker's delete.topic.enable. Without it a deletion marker is a request the controller
  // refuses, so the model never shows a topic marked: brokers keep serving it and keep its data.
  metadata_table(zk_session& session, task_sink enqueue, bool deletion_enabled = true)
      : session_(session), enqueue_(std::move(enqueue)), deletion_enabled_(deletion_enabled) {}

  [[nodiscard]] cluster_view& model() { return model_; }
  [[nodiscard]] const cluster_view& model() const { return model_; }

  // Watches that fired must be set again; after a new session none of the old ones exists.
  void forget_fired(const std::vector<std::string>& keys);
  void forget_all_watches() { armed_.clear(); }

  // Reads `path`, setting a data watch that enqueues `t` unless one is set already; with watch_creation, a
  // missing node gets an exists watch that fires when it appears. nullopt when the node does not exist.
  result<std::optional<node_data>> read_watched(const std::string& path, const task& t, bool watch_creation);

  result<void> resync();
  // `reregister` puts this broker's registration back when someone deleted it while the session lives. An
  // observer that is no broker (the operator) passes no_broker and no `reregister`.
  result<void> refresh_brokers(broker_id self, const std::function<result<void>()>& reregister);
  result<void> refresh_deletions();
  result<void> refresh_shutting_down();
  result<void> refresh_offline_replicas();
  result<void> refresh_topics(bool full);
  result<void> refresh_topic(const std::string& name, bool full);
  // Reads one state znode again (after a lost race of the controller's).
  result<void> refresh_partition_state(const std::string& name, partition_id p);
  // Applies new /ferry/partition_state_changes nodes; skip_existing as for refresh_config_changes. Returns
  // every change node's name, oldest first, for the controller to purge old ones.
  result<std::vector<std::string>> refresh_state_changes(bool skip_existing);
  // Applies new /config/changes notifications; skip_existing marks those present as seen without reading
  // them (a resync reads every config anyway). Returns the notification znodes' names, oldest first, for
  // the controller to purge old ones.
  result<std::vector<std::string>> refresh_config_changes(bool skip_existing);
  // Reads every dynamic broker config (/config/brokers/*); notifications keep them current afterwards.
  result<void> refresh_broker_configs();
  // Reads every user's config entity (/config/users/*) and every client quota entity (/config/clients/*,
  // /config/users/*/clients/*); notifications keep them current afterwards.
  result<void> refresh_user_configs();
  // The cluster's ACLs (coord/acl_layout.h), which brokers follow and the operator's observer does not: reads
  // every one, marking the change notifications present as seen. A node that does not decode is logged and left
  // out.
  result<void> refresh_acls();
  // Applies new change notifications of LITERAL (pattern literal) or PREFIXED patterns by reading each named
  // pattern's node again. Returns the notification znodes' names, oldest first, for the controller to purge.
  result<std::vector<std::string>> refresh_acl_changes(authz::pattern_type pattern);

  [[nodiscard]] const std::set<std::string, std::less<>>& deletion_markers() const { return deletion_markers_; }
  void forget_deletion_marker(const std::string& name) { deletion_markers_.erase(name); }
  // The brokers that have deleted their logs of a topic marked for deletion (the children of its marker), read
  // with a watch that runs the worker, and so the controller's duties, when one more has.
  result<std::set<broker_id>> deletion_acknowledgements(const std::string& topic);
  // Data version of the topic znode as last read (for conditional writes by the controller).
  [[nodiscard]] std::int32_t topic_version(const std::string& name) const { return topic_versions_.at(name); }
  // The controller rewrote the topic znode (and updated the model to match): the version its write produced.
  void set_topic_version(const std::string& name, std::int32_t version) { topic_versions_[name] = version; }

 private:
  [[nodiscard]] watcher watch_for(task t, std::string key) const;
  // The children of `parent`, setting a children watch that enqueues `kind` unless one is set already.
  result<std::vector<std::string>> read_children_watched(std::string_view parent, task_kind kind);
  // A parent of sequential notification nodes: /config/changes, /ferry/partition_state_changes.
  struct notification_log {
    std::string_view parent;
    task_kind kind;                                             // the task its children watch enqueues
    std::optional<std::int64_t> (*sequence)(std::string_view);  // a child's number, nullopt for other names
  };
  // Reads (watching) the children of `log`, hands each one numbered after `last_seen` to `apply`, oldest
  // first, unless skip_existing, and moves `last_seen` on. Returns every child's name, oldest first.
  result<std::vector<std::string>> read_new_notifications(
      const notification_log& log, std::int64_t& last_seen, bool skip_existing,
      const std::function<result<void>(const std::string& child, const node_data& node)>& apply);
  result<std::optional<partition_state>> read_partition_state(const std::string& name, partition_id p);
  // `written_zxid`: the change node's czxid, the transaction that wrote the state.
  result<void> apply_state_change(layout::partition_state_change change, std::int64_t written_zxid);
  // A /config/<type>/<name> node: nullopt when it is missing or malformed (logged).
  result<std::optional<layout::config_map>> read_entity_config(const std::string& path);
  result<layout::config_map> read_config(const std::string& name);
  // One /config/brokers entity into the model (removed from it when the node is gone).
  result<void> read_broker_config(const std::string& entity);
  // One /config/users entity (a sanitized user name) into the model, the same way.
  result<void> read_user_config(const std::string& sanitized);
  // One client quota entity (sanitized names; no user for /config/clients) into the model, the same way.
  result<void> read_client_quota(const std::optional<std::string>& user, const std::string& client);
  // Every client quota entity under `parent` (/config/clients or /config/users/<u>/clients).
  result<void> read_client_quotas(const std::optional<std::string>& user);
  // Keeps a topic whose znode cannot be used in the model, without partitions, and says why once.
  result<void> mark_invalid(const std::string& name, std::string why, std::int32_t version, bool is_new);
  void drop_topic(const std::string& name);
  // Reads one pattern's ACLs into acls_; false when its node does not decode (acls_ keeps what it had).
  result<bool> read_acls(const authz::resource_pattern& resource);
  // The model's acl_snapshot, rebuilt from acls_.
  void publish_acls();

  zk_session& session_;
  const task_sink enqueue_;
  cluster_view model_;
  std::map<std::string, std::int32_t, std::less<>> topic_versions_;
  std::set<std::string, std::less<>> deletion_markers_;
  bool deletion_enabled_ = true;
  std::set<std::string, std::less<>> armed_;  // watch keys ("c:" children, "d:" data + path) currently set
  std::int64_t last_config_change_ = -1;
  std::int64_t last_state_change_ = -1;
  std::map<authz::resource_pattern, std::vector<authz::acl_entry>> acls_;
  std::int64_t last_acl_change_ = -1;           // of /kafka-acl-changes
  std::int64_t last_extended_acl_change_ = -1;  // of /kafka-acl-extended-changes
};

// Why an assignment read from /brokers/topics/<topic> cannot be used, or nullopt when it can: it must name
// at least one partition, each with at least one replica, no broker twice and no negative broker id.
[[nodiscard]] std::optional<std::string> assignment_problem(const layout::topic_assignment& assignment);

}  // namespace ferry::coord
