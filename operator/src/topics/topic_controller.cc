#include "topics/topic_controller.h"

#include <random>

#include "base/log.h"
#include "coord/errc.h"
#include "coord/reassignment.h"
#include "kube/conditions.h"
#include "kube/resource_meta.h"
#include "kube/time_format.h"

namespace ferry::topics {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using kube::reconcile_result;

constexpr auto creation_check = 5s;
constexpr auto cluster_retry = 2s;

std::string status_field(const json& resource, const char* name) {
  const auto status = resource.find("status");
  if (status == resource.end() || !status->is_object()) return {};
  return status->value(name, std::string{});
}

std::int64_t generation_of(const json& resource) { return resource["metadata"].value("generation", std::int64_t{0}); }

// The topic name a resource asks for, before any checks (for the conflict index).
std::string requested_name(const json& resource) {
  return resource.value("spec", json::object()).value("topicName", resource["metadata"].value("name", std::string{}));
}

json summary_json(const partition_summary& summary) {
  return {{"count", summary.count}, {"offline", summary.offline}, {"reassigning", summary.reassigning}};
}

// The Ready state the reconcile running on this worker thread wrote last, for its result.
thread_local std::optional<kube::resource_state> written_state;

std::int32_t random_start() {
  static thread_local std::minstd_rand random(std::random_device{}());
  return static_cast<std::int32_t>(random() % 1'000'000);
}

}  // namespace

std::string topic_controller::path_of(const json& resource) const {
  return kube::resource_path(resource, "/apis/ferry.dev/v1alpha1", "topics");
}

bool topic_controller::belongs(const json& resource) const {
  return kube::label(resource, cluster_label) == options_.cluster_name;
}

bool topic_controller::was_ours(const json& resource) const {
  const auto cluster = status_field(resource, "cluster");
  return cluster == options_.cluster_name || (cluster.empty() && kube::label(resource, cluster_label).empty());
}

bool topic_controller::created_or_adopted(const json& resource, const std::string& key,
                                          const coord::topic_info& live) const {
  const auto id = live.topic_id.to_string();
  if (id == status_field(resource, "topicId") || kube::annotation(resource, adopt_annotation) == "true") return true;
  std::lock_guard lock(index_mutex_);
  const auto created = created_ids_.find(key);
  return created != created_ids_.end() && created->second.contains(id);
}

void topic_controller::resource_changed(const std::string& key, const kube::informer::object& now) {
  const bool mine = now && belongs(*now);
  {
    std::lock_guard lock(index_mutex_);
    if (const auto old = by_key_.find(key); old != by_key_.end()) {
      keys_by_topic_[old->second.topic].erase(key);
      if (keys_by_topic_[old->second.topic].empty()) keys_by_topic_.erase(old->second.topic);
      by_key_.erase(old);
    }
    if (!now) created_ids_.erase(key);
    if (mine) {
      indexed entry{requested_name(*now), (*now)["metadata"].value("creationTimestamp", std::string{})};
      keys_by_topic_[entry.topic].insert(key);
      by_key_.emplace(key, std::move(entry));
    }
  }
  // Deletions are queued too: a deleted resource's give-up clock is forgotten there.
  if (mine || !now || (kube::has_finalizer(*now, topic_finalizer) && was_ours(*now))) queue_.add(key);
}

void topic_controller::cluster_changed(const coord::cluster_view& before, const coord::cluster_view& after) {
  std::lock_guard lock(index_mutex_);
  if (before.brokers != after.brokers) {
    for (const auto& [key, entry] : by_key_) queue_.add(key);
    return;
  }
  const auto changed = [&](const std::string& topic) {
    const auto b = before.topics.find(topic);
    const auto a = after.topics.find(topic);
    if (b == before.topics.end() || a == after.topics.end())
      return (b == before.topics.end()) != (a == after.topics.end());
    return !(b->second == a->second);
  };
  for (const auto& [topic, keys] : keys_by_topic_) {
    if (!changed(topic)) continue;
    for (const auto& key : keys) queue_.add(key);
  }
}

void topic_controller::resync_all() {
  std::lock_guard lock(index_mutex_);
  for (const auto& [key, entry] : by_key_) queue_.add(key);
}

std::set<std::string> topic_controller::managed_topics() const {
  std::lock_guard lock(index_mutex_);
  std::set<std::string> names;
  for (const auto& [topic, keys] : keys_by_topic_) names.insert(topic);
  return names;
}

std::optional<std::string> topic_controller::owner_of(const std::string& topic) const {
  std::lock_guard lock(index_mutex_);
  const auto keys = keys_by_topic_.find(topic);
  if (keys == keys_by_topic_.end() || keys->second.empty()) return std::nullopt;
  std::optional<std::pair<std::string, std::string>> oldest;  // (creationTimestamp, key)
  for (const auto& key : keys->second) {
    std::pair<std::string, std::string> candidate{by_key_.at(key).created, key};
    if (!oldest || candidate < *oldest) oldest = std::move(candidate);
  }
  return oldest->second;
}

std::optional<std::string> topic_controller::owner_in_cache(const std::string& topic) const {
  std::optional<std::pair<std::string, std::string>> oldest;  // (creationTimestamp, key)
  for (const auto& object : topics_->list()) {
    if (!belongs(*object) || requested_name(*object) != topic) continue;
    std::pair<std::string, std::string> candidate{(*object)["metadata"].value("creationTimestamp", std::string{}),
                                                  kube::informer::key_of(*object)};
    if (!oldest || candidate < *oldest) oldest = std::move(candidate);
  }
  if (!oldest) return std::nullopt;
  return oldest->second;
}

json topic_controller::status_with(const json& resource, const status_update& ready, const coord::topic_info* live,
                                   const std::string& topic_name, const std::string& created_id) const {
  const auto old = resource.value("status", json::object());
  const auto generation = generation_of(resource);
  const auto condition = kube::make_condition(old.value("conditions", json::array()), "Ready", ready.ready,
                                              ready.reason, ready.message, generation);
  json status = {{"observedGeneration", generation},
                 {"cluster", options_.cluster_name},
                 {"topicName", topic_name},
                 {"conditions", json::array({condition})}};
  // The id of the topic this resource created or adopted; only a live topic with this id is deleted with it.
  if (live != nullptr && !live->topic_id.is_zero()) {
    status["topicId"] = live->topic_id.to_string();
  } else if (!created_id.empty()) {
    status["topicId"] = created_id;
  } else if (old.contains("topicId")) {
    status["topicId"] = old["topicId"];
  }
  if (live != nullptr) {
    const auto summary = summarize(*live);
    status["partitions"] = summary_json(summary);
    const auto factor = resource.value("spec", json::object()).value("replicationFactor", std::int32_t{0});
    const auto pending = pending_replication_moves(*live, factor);
    if (pending > 0 || summary.reassigning > 0) {
      status["replicasChange"] = {
          {"targetReplicationFactor", factor}, {"pending", pending}, {"moving", summary.reassigning}};
    }
  }
  return status;
}

bool topic_controller::write_status(const json& resource, json status) {
  const auto old = resource.value("status", json::object());
  if (old == status) return true;
  const json patch = json::array({{{"op", "add"}, {"path", "/status"}, {"value", std::move(status)}}});
  const auto answer =
      api_.send(kube::api_client::verb::patch, path_of(resource) + "/status", patch.dump(), kube::json_patch);
  if (answer && (answer.value().status == 200 || answer.value().status == 404)) return true;
  FERRY_LOG(warn, "topics") << "cannot write the status of " << kube::informer::key_of(resource) << ": "
                            << (answer ? "HTTP " + std::to_string(answer.value().status) + " " +
                                             answer.value().body.substr(0, 300)
                                       : answer.error().message());
  return false;
}

bool topic_controller::set_ready(const json& resource, const status_update& ready, const coord::topic_info* live,
                                 const std::string& topic_name, const std::string& created_id) {
  const auto old = resource.value("status", json::object());
  std::string old_reason;
  for (const auto& c : old.value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") old_reason = c.value("reason", "");
  }
  if (old_reason != ready.reason && !ready.ready && ready.reason != "Creating" && ready.reason != "Updating" &&
      ready.reason != "ReplicasChangePending") {
    events_.record(resource, kube::event_recorder::type::warning, ready.reason, "Reconcile", ready.message);
  }
  written_state = kube::resource_state{.ready = ready.ready, .reason = ready.reason};
  return write_status(resource, status_with(resource, ready, live, topic_name, created_id));
}

bool topic_controller::add_finalizer(const json& resource) {
  return kube::add_finalizer(api_, path_of(resource), resource, topic_finalizer);
}

bool topic_controller::remove_finalizer(const json& resource) {
  return kube::remove_finalizer(api_, path_of(resource), resource, topic_finalizer);
}

reconcile_result topic_controller::finalize(const json& resource, const std::string& key) {
  if (!kube::has_finalizer(resource, topic_finalizer)) return {};
  const auto name = requested_name(resource);
  const auto policy = kube::annotation(resource, deletion_policy_annotation);
  const bool retain = policy == "retain" || (policy != "delete" && options_.retain_by_default);
  if (retain || kube::annotation(resource, managed_annotation) == "false" || is_internal_topic(name) ||
      owner_in_cache(name) != key) {
    FERRY_LOG(info, "topics") << key << " deleted; leaving topic " << name << " in the cluster";
    return {.failed = !remove_finalizer(resource)};
  }
  if (!cluster_.connected()) {
    if (give_up_.unreachable(key, kube::give_up_clock::clock::now())) {
      events_.record(resource, kube::event_recorder::type::warning, "TopicLeftBehind", "Delete",
                     "the Ferry cluster has been unreachable for " +
                         std::to_string(options_.finalizer_timeout.count()) +
                         " s; the finalizer is removed and topic " + name + " may still exist");
      FERRY_LOG(warn, "topics") << key << ": cluster unreachable past the finalizer timeout; removing the finalizer";
      return {.failed = !remove_finalizer(resource)};
    }
    set_ready(resource, {"ClusterUnavailable", "waiting for ZooKeeper to delete topic " + name, false}, nullptr, name);
    return {.requeue_after = cluster_retry};
  }
  give_up_.reached(key);
  // Connected but still reading the cluster: not a reason to give up, only to wait.
  if (!cluster_.ready()) return {.requeue_after = cluster_retry};
  const auto view = cluster_.view();
  const auto live = view->topics.find(name);
  if (live != view->topics.end() && !created_or_adopted(resource, key, live->second)) {
    FERRY_LOG(info, "topics") << key << " deleted; topic " << name
                              << " was neither created nor adopted by it and stays in the cluster";
    return {.failed = !remove_finalizer(resource)};
  }
  if (live != view->topics.end() && !live->second.marked_for_deletion) {
    if (auto deleted = cluster_.topics().delete_topic(name); !deleted && deleted.error() != coord::errc::no_node) {
      FERRY_LOG(warn, "topics") << "cannot delete topic " << name << ": " << deleted.error().message();
      return {.failed = true};
    }
    FERRY_LOG(info, "topics") << "marked topic " << name << " for deletion (" << key
                              << " was deleted; brokers with delete.topic.enable=false keep it)";
  }
  // Kafka's DeleteTopics answers once the topic is marked; the controller removes it from there.
  return {.failed = !remove_finalizer(resource)};
}

reconcile_result topic_controller::release(const json& resource, const std::string& key) {
  if (!kube::has_finalizer(resource, topic_finalizer) || !was_ours(resource)) return {};
  const auto now = kube::label(resource, cluster_label);
  events_.record(resource, kube::event_recorder::type::warning, "ClusterChanged", "Release",
                 "label " + std::string(cluster_label) + " is " + (now.empty() ? "gone" : "now " + now) + ": cluster " +
                     options_.cluster_name + " no longer manages this resource, and topic " + requested_name(resource) +
                     " stays in it");
  FERRY_LOG(warn, "topics") << key << " no longer names cluster " << options_.cluster_name
                            << "; removing the finalizer and leaving its topic";
  return {.failed = !remove_finalizer(resource)};
}

reconcile_result topic_controller::reconcile(const std::string& key) {
  written_state.reset();
  auto outcome = reconcile_resource(key);
  const auto object = topics_->get(key);
  if (!object || !belongs(*object) || (*object)["metadata"].contains("deletionTimestamp")) {
    outcome.state = kube::resource_state{.gone = true};
  } else {
    outcome.state = written_state;
  }
  return outcome;
}

reconcile_result topic_controller::reconcile_resource(const std::string& key) {
  const auto object = topics_->get(key);
  if (!object) {
    give_up_.reached(key);
    return {};
  }
  const json& resource = *object;
  if (!belongs(resource)) return release(resource, key);
  const auto& meta = resource["metadata"];
  if (meta.contains("deletionTimestamp")) return finalize(resource, key);
  const auto name = requested_name(resource);

  if (kube::annotation(resource, managed_annotation) == "false") {
    if (kube::has_finalizer(resource, topic_finalizer) && !remove_finalizer(resource)) return {.failed = true};
    json status = {{"observedGeneration", generation_of(resource)},
                   {"conditions",
                    json::array({kube::make_condition(json::array(), "Unmanaged", true, "Unmanaged",
                                                      "annotation ferry.dev/managed is \"false\": topic " + name +
                                                          " is left as it is, and kept when this resource is deleted",
                                                      generation_of(resource))})}};
    const auto old = resource.value("status", json::object());
    if (old.value("conditions", json::array()).size() == 1 && old["conditions"][0].value("type", "") == "Unmanaged" &&
        old.value("observedGeneration", 0) == generation_of(resource)) {
      return {};
    }
    return {.failed = !write_status(resource, status)};
  }
  if (kube::annotation(resource, pause_annotation) == "true") {
    auto status = resource.value("status", json::object());
    auto conditions = json::array();
    bool present = false;
    for (const auto& c : status.value("conditions", json::array())) {
      if (c.value("type", "") == "ReconciliationPaused") present = true;
      conditions.push_back(c);
    }
    if (present) return {};
    conditions.push_back(kube::make_condition(
        json::array(), "ReconciliationPaused", true, "ReconciliationPaused",
        "annotation ferry.dev/pause-reconciliation is \"true\": changes are not applied", generation_of(resource)));
    status["conditions"] = conditions;
    return {.failed = !write_status(resource, status)};
  }
  // An internal name is refused before a finalizer could ever delete it.
  if (!is_internal_topic(name) && !kube::has_finalizer(resource, topic_finalizer) && !add_finalizer(resource))
    return {.failed = true};

  auto spec = read_spec(resource);
  if (const auto* refused = std::get_if<refusal>(&spec)) {
    return {.failed = !set_ready(resource, {refused->reason, refused->message, false}, nullptr, name)};
  }
  const auto& wanted = std::get<topic_spec>(spec);
  if (const auto owner = owner_of(wanted.name); owner && *owner != key) {
    return {.failed =
                !set_ready(resource, {"ResourceConflict", "topic " + wanted.name + " is managed by " + *owner, false},
                           nullptr, wanted.name)};
  }
  const auto previous = resource.value("status", json::object()).value("topicName", std::string{});
  if (!previous.empty() && previous != wanted.name) {
    return {.failed = !set_ready(resource,
                                 {"NotSupported",
                                  "the topic name cannot change (from " + previous + " to " + wanted.name +
                                      "); create a new Topic resource instead",
                                  false},
                                 nullptr, previous)};
  }
  return apply(resource, key, wanted);
}

reconcile_result topic_controller::apply(const json& resource, const std::string& key, const topic_spec& spec) {
  if (!cluster_.connected() || !cluster_.ready()) {
    set_ready(resource, {"ClusterUnavailable", "cannot reach the Ferry cluster's ZooKeeper", false}, nullptr,
              spec.name);
    return {.requeue_after = cluster_retry};
  }
  const auto view = cluster_.view();
  const auto found = view->topics.find(spec.name);
  const coord::topic_info* live = found == view->topics.end() ? nullptr : &found->second;
  if (live != nullptr && live->marked_for_deletion) {
    set_ready(resource,
              {"TopicBeingDeleted", "topic " + spec.name + " is being deleted; it is created again afterwards", false},
              live, spec.name);
    return {.requeue_after = cluster_retry};
  }
  if (live != nullptr && !created_or_adopted(resource, key, *live)) {
    // The cache can lag the status an earlier leader of the operator wrote just before it created the topic and
    // died: ask the API server before calling the topic someone else's, or the id in status would be lost.
    const auto fresh = api_.send(kube::api_client::verb::get, path_of(resource));
    if (!fresh || fresh.value().status != 200) return {.requeue_after = cluster_retry};
    const auto current = json::parse(fresh.value().body, nullptr, false);
    if (current.is_discarded() || !current.is_object()) return {.requeue_after = cluster_retry};
    if (created_or_adopted(current, key, *live)) {
      FERRY_LOG(info, "topics") << key << ": the cache lags the resource's status; reconciling again";
      return {.requeue_after = cluster_retry};
    }
    // The live topic is not passed: its id in status would make it look created here.
    return {.failed = !set_ready(current,
                                 {"AdoptionRequired",
                                  "topic " + spec.name +
                                      " exists and was not created by this resource; annotate it ferry.dev/adopt=true "
                                      "to manage the topic (its config overrides then become spec.config, and "
                                      "deleting the resource deletes the topic unless its deletion policy is retain)",
                                  false},
                                 nullptr, spec.name)};
  }
  // New replicas go to the brokers that stay (the view is copied only while brokers are leaving).
  const auto leaving = options_.leaving_brokers ? options_.leaving_brokers() : std::set<broker_id>{};
  std::optional<coord::cluster_view> staying;
  if (!leaving.empty()) {
    staying = *view;
    for (const auto b : leaving) staying->brokers.erase(b);
  }
  auto planned = plan_changes(spec, live, staying ? *staying : *view, random_start());
  if (const auto* refused = std::get_if<refusal>(&planned)) {
    return {.failed = !set_ready(resource, {refused->reason, refused->message, false}, live, spec.name)};
  }
  auto changes = std::get<topic_changes>(std::move(planned));
  // Replication factor changes share the cluster's move budget with balancing and draining.
  const auto in_flight = coord::reassignments_in_flight(*view);
  const auto budget = options_.max_moves > in_flight ? options_.max_moves - in_flight : 0;
  const auto waiting = changes.moves.size() > budget ? changes.moves.size() - budget : 0;
  while (changes.moves.size() > budget) changes.moves.erase(std::prev(changes.moves.end()));
  if (changes.empty() && waiting > 0) {
    const auto why = options_.max_moves == 0 ? std::string("replica moves are off (--max-concurrent-moves 0)")
                                             : std::to_string(in_flight) +
                                                   " reassignments are in flight, the most "
                                                   "--max-concurrent-moves allows";
    if (!set_ready(resource,
                   {"ReplicasChangePending",
                    std::to_string(waiting) + " partitions wait to move to replication factor " +
                        std::to_string(spec.replication_factor) + ": " + why,
                    false},
                   live, spec.name)) {
      return {.failed = true};
    }
    return {.requeue_after = creation_check};
  }
  if (changes.empty()) {
    const auto summary = summarize(*live);
    const bool ready = summary.offline == 0;
    const status_update update =
        ready ? status_update{"TopicReady",
                              "topic " + spec.name + " has " + std::to_string(summary.count) +
                                  " partitions, each with a leader",
                              true}
              : status_update{"PartitionsOffline",
                              std::to_string(summary.offline) + " of " + std::to_string(summary.count) +
                                  " partitions have no leader yet (brokers down, or being created)",
                              false};
    if (!set_ready(resource, update, live, spec.name)) return {.failed = true};
    return ready ? reconcile_result{} : reconcile_result{.requeue_after = creation_check};
  }

  auto& store = cluster_.topics();
  std::string done;
  std::string created_id;
  if (changes.create) {
    // The id is in status before the topic exists: a topic found later with another id is someone else's.
    const auto id = coord::uuid::random();
    created_id = id.to_string();
    {
      std::lock_guard lock(index_mutex_);
      created_ids_[key].insert(created_id);
    }
    if (!set_ready(resource, {"Creating", "creating topic " + spec.name, false}, nullptr, spec.name, created_id)) {
      return {.failed = true};
    }
    auto created = store.create_topic(spec.name, *changes.assignment, *changes.config, id);
    if (!created && created.error() == coord::errc::node_exists) return {.requeue_after = cluster_retry};
    if (!created) {
      set_ready(resource,
                {"ClusterError", "creating topic " + spec.name + " failed: " + created.error().message(), false}, live,
                spec.name);
      return {.failed = true};
    }
    done = "created with " + std::to_string(spec.partitions) + " partitions";
    events_.record(resource, kube::event_recorder::type::normal, "Created", "Create",
                   "topic " + spec.name + " " + done);
  } else {
    if (changes.assignment) {
      if (auto grown = store.add_partitions(spec.name, *changes.assignment); !grown) {
        FERRY_LOG(warn, "topics") << "adding partitions to " << spec.name << " failed: " << grown.error().message();
        return {.failed = true};
      }
      done += "partitions " + std::to_string(live->partitions.size()) + " -> " + std::to_string(spec.partitions) + "; ";
    }
    if (changes.config) {
      if (auto set = store.set_topic_config(spec.name, *changes.config); !set) {
        FERRY_LOG(warn, "topics") << "setting the config of " << spec.name << " failed: " << set.error().message();
        return {.failed = true};
      }
      done += "config overrides replaced; ";
    }
    if (!changes.moves.empty()) {
      if (auto moved = options_.start_moves(spec.name, changes.moves); !moved) {
        FERRY_LOG(warn, "topics") << "reassigning " << spec.name << " failed: " << moved.error().message();
        return {.failed = true};
      }
      done += std::to_string(changes.moves.size()) + " partitions reassigned to replication factor " +
              std::to_string(spec.replication_factor) + "; ";
      if (waiting > 0) done += std::to_string(waiting) + " more wait for the move budget; ";
    }
    events_.record(resource, kube::event_recorder::type::normal, "Updated", "Update",
                   "topic " + spec.name + ": " + done);
  }
  FERRY_LOG(info, "topics") << key << ": topic " << spec.name << " " << done;
  set_ready(resource, {changes.create ? "Creating" : "Updating", "topic " + spec.name + " " + done, false}, live,
            spec.name, created_id);
  return {.requeue_after = creation_check};
}

}  // namespace ferry::topics
