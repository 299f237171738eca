#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "coord/cluster_observer.h"
#include "kube/api_client.h"
#include "kube/controller.h"
#include "kube/event_recorder.h"
#include "kube/give_up_clock.h"
#include "kube/informer_group.h"
#include "topics/topic_plan.h"

namespace ferry::topics {

// The names the Topic resource and its controller agree on (docs/operator.md).
inline constexpr std::string_view topic_finalizer = "ferry.dev/topic";
inline constexpr std::string_view pause_annotation = "ferry.dev/pause-reconciliation";       // "true": hands off
inline constexpr std::string_view managed_annotation = "ferry.dev/managed";                  // "false": let go
inline constexpr std::string_view deletion_policy_annotation = "ferry.dev/deletion-policy";  // retain, delete
inline constexpr std::string_view adopt_annotation = "ferry.dev/adopt";  // "true": take over an existing topic
inline constexpr std::string_view cluster_label = "ferry.dev/cluster";

struct topic_controller_options {
  // The ferry.dev/cluster label value of the resources this operator manages.
  std::string cluster_name;
  // What deleting a resource without a ferry.dev/deletion-policy annotation does to its topic.
  bool retain_by_default = false;
  // How long a deleted resource waits for an unreachable cluster before its finalizer is removed anyway
  // (leaving the topic behind), so that its namespace never sticks in Terminating.
  std::chrono::seconds finalizer_timeout{300};
  // Reassignments in flight at once across the cluster (--max-concurrent-moves): replication factor changes
  // start their partitions' moves as this budget allows.
  std::size_t max_moves = 10;
  // Starts a topic's reassignment (each partition's new replicas), with the operator's replication throttles.
  std::function<result<void>(const std::string& topic, const std::map<partition_id, std::vector<broker_id>>& targets)>
      start_moves;
  // Brokers being drained before they are removed: new replicas are not placed on them.
  std::function<std::set<broker_id>()> leaving_brokers;
};

// Reconciles Topic resources (topics.ferry.dev) one way, from the resource to the cluster: creates or adopts
// the topic (adopting one it did not create only when annotated), grows it, replaces its config overrides
// (reverting changes made behind its back), changes its replication factor by reassignment, and deletes the
// topic it created or adopted through a finalizer. Placement and every write go through ZooKeeper
// (docs/zookeeper-layout.md). Two resources naming one topic: the older owns it. Internal topics (__*) are
// never touched. A resource whose ferry.dev/cluster label no longer names this cluster is let go. Runs on the
// controller's worker threads; the change hooks are called from the informer's and observer's threads.
class topic_controller {
 public:
  topic_controller(kube::api_client& api, kube::event_recorder& events, coord::cluster_observer& cluster,
                   kube::work_queue& queue, topic_controller_options options)
      : api_(api),
        events_(events),
        cluster_(cluster),
        queue_(queue),
        options_(std::move(options)),
        give_up_(options_.finalizer_timeout) {}

  // Every Topic in the watched namespaces, whatever its cluster label.
  void set_informer(kube::informer_group& topics) { topics_ = &topics; }

  // Reconciles one resource; the result carries its Ready state for the operator's metrics.
  kube::reconcile_result reconcile(const std::string& key);

  // A resource changed (from the informer): re-index it and queue it.
  void resource_changed(const std::string& key, const kube::informer::object& now);
  // The cluster changed (from the observer): queue the resources of the topics that changed, or all of them
  // when the brokers changed.
  void cluster_changed(const coord::cluster_view& before, const coord::cluster_view& after);
  // Queue every resource (the periodic full reconciliation).
  void resync_all();
  // The topics some resource names (the ones the operator may move replicas of).
  [[nodiscard]] std::set<std::string> managed_topics() const;

 private:
  struct status_update {
    std::string reason;
    std::string message;
    bool ready = false;
  };

  kube::reconcile_result reconcile_resource(const std::string& key);
  kube::reconcile_result finalize(const nlohmann::json& resource, const std::string& key);
  kube::reconcile_result apply(const nlohmann::json& resource, const std::string& key, const topic_spec& spec);
  // A resource that carried this cluster's label and no longer does: its finalizer goes, its topic stays.
  kube::reconcile_result release(const nlohmann::json& resource, const std::string& key);
  // Whether the resource's label names this cluster.
  [[nodiscard]] bool belongs(const nlohmann::json& resource) const;
  // Whether the live topic is the one this resource created (its id is in status, or this process created it
  // and the cache has not caught up) or adopted.
  [[nodiscard]] bool created_or_adopted(const nlohmann::json& resource, const std::string& key,
                                        const coord::topic_info& live) const;
  // Whether this operator managed the resource last (its status says so, or it has no cluster at all).
  [[nodiscard]] bool was_ours(const nlohmann::json& resource) const;
  // The key of the resource that owns `topic` (the oldest naming it), if any, from the index...
  std::optional<std::string> owner_of(const std::string& topic) const;
  // ...and from the whole cache, for the irreversible decision of deleting the topic.
  std::optional<std::string> owner_in_cache(const std::string& topic) const;
  bool write_status(const nlohmann::json& resource, nlohmann::json status);
  // `created_id`: the id of the topic this reconcile creates (written before the topic, so that the topic
  // found later is known to be this resource's).
  nlohmann::json status_with(const nlohmann::json& resource, const status_update& ready, const coord::topic_info* live,
                             const std::string& topic_name, const std::string& created_id = {}) const;
  bool set_ready(const nlohmann::json& resource, const status_update& ready, const coord::topic_info* live,
                 const std::string& topic_name, const std::string& created_id = {});
  bool add_finalizer(const nlohmann::json& resource);
  bool remove_finalizer(const nlohmann::json& resource);
  std::string path_of(const nlohmann::json& resource) const;

  kube::api_client& api_;
  kube::event_recorder& events_;
  coord::cluster_observer& cluster_;
  kube::work_queue& queue_;
  const topic_controller_options options_;
  kube::informer_group* topics_ = nullptr;
  kube::give_up_clock give_up_;

  struct indexed {
    std::string topic;
    std::string created;  // creationTimestamp: the older resource owns a contested topic
  };
  mutable std::mutex index_mutex_;
  std::map<std::string, indexed> by_key_;
  std::map<std::string, std::set<std::string>> keys_by_topic_;
  // The ids of the topics each resource created in this process (status may lag behind in the cache).
  std::map<std::string, std::set<std::string>> created_ids_;
};

}  // namespace ferry::topics
