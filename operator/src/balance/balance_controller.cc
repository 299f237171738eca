#include "balance/balance_controller.h"

#include <algorithm>
#include <map>

#include "balance/external_services.h"
#include "base/log.h"
#include "coord/reassignment.h"

namespace ferry::balance {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string id_list(const std::set<broker_id>& ids) {
  std::string list;
  for (const auto b : ids) list += (list.empty() ? "" : ",") + std::to_string(b.value());
  return list;
}

std::string id_list(const std::vector<broker_id>& ids) { return id_list(std::set<broker_id>(ids.begin(), ids.end())); }

// Brokers with an id the StatefulSet no longer asks for, live or named by a partition.
std::set<broker_id> leaving_brokers(const coord::cluster_view& view, std::int32_t desired) {
  std::set<broker_id> leaving;
  for (const auto& [id, broker] : view.brokers) {
    if (id.value() >= desired) leaving.insert(id);
  }
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, partition] : topic.partitions) {
      for (const auto r : partition.replicas) {
        if (r.value() >= desired) leaving.insert(r);
      }
    }
  }
  return leaving;
}

}  // namespace

std::set<broker_id> balance_controller::leaving() const {
  std::lock_guard lock(mutex_);
  return leaving_;
}

std::optional<std::pair<json, broker_set>> balance_controller::read_broker_set_object() {
  if (broker_sets_ == nullptr) return std::nullopt;
  const auto object = broker_sets_->get(options_.broker_set);
  if (!object) return std::nullopt;
  // Objects from a list carry no kind; Events need it.
  json statefulset = *object;
  statefulset["kind"] = "StatefulSet";
  statefulset["apiVersion"] = "apps/v1";
  auto read = read_broker_set(statefulset);
  if (!read.set) {
    warn(statefulset, "InvalidBrokerCount", read.error + "; no broker is drained until it is fixed");
    return std::nullopt;
  }
  return std::pair{std::move(statefulset), *read.set};
}

kube::reconcile_result balance_controller::reconcile(const std::string& /*key*/) {
  if (!cluster_.connected() || !cluster_.ready()) return {.requeue_after = 2s};
  const bool throttled = moves_.release_when_idle();
  // Until the StatefulSet is known, which brokers stay is not.
  if (broker_sets_ != nullptr && !broker_sets_->synced()) return {.requeue_after = 1s};
  const auto view = cluster_.view();
  const auto statefulset = read_broker_set_object();

  std::set<broker_id> leaving;
  if (statefulset) leaving = leaving_brokers(*view, statefulset->second.desired);
  std::set<broker_id> was_leaving;
  {
    std::lock_guard lock(mutex_);
    was_leaving = std::exchange(leaving_, leaving);
  }
  const auto plan = plan_balance(*view, managed_topics_(),
                                 {.max_moves = options_.max_moves, .leaving = leaving, .spread = options_.spread});
  metrics_.set_reassignments_in_flight(coord::reassignments_in_flight(*view) + plan.moves.size());
  metrics_.set_leaving_brokers(leaving.size());

  if (statefulset) {
    const auto& [object, set] = *statefulset;
    if (!leaving.empty() && leaving != was_leaving) {
      events_.record(object, kube::event_recorder::type::normal, "DrainingBrokers", "Drain",
                     "moving every replica off brokers " + id_list(leaving) + " before the StatefulSet scales to " +
                         std::to_string(set.desired));
    }
    // The floor covers the moves about to start before they start, and drops only once replicas are gone.
    const auto floor = std::max(replica_floor(*view, plan.moves), std::min(set.desired, set.replicas));
    metrics_.set_replica_floor(static_cast<std::size_t>(floor));
    if (set.floor != floor) {
      if (!patch_broker_set(
              object,
              {{"metadata", {{"annotations", {{std::string(replica_floor_annotation), std::to_string(floor)}}}}}})) {
        return {.failed = true};
      }
      FERRY_LOG(info, "balance") << "replica floor of " << options_.broker_set << " is now " << floor;
      // Scaling waits for the next pass, which sees the floor it wrote.
      if (floor > set.floor.value_or(0))
        return start_moves(plan.moves) ? kube::reconcile_result{.requeue_after = 5s}
                                       : kube::reconcile_result{.failed = true};
      return {.requeue_after = 1s};
    }
    if (options_.max_moves == 0 && floor > set.desired) {
      warn(object, "MovesDisabled",
           "brokers " + id_list(leaving) +
               " hold replicas and --max-concurrent-moves is 0, so they are not drained: "
               "the StatefulSet stays at " +
               std::to_string(set.replicas));
    } else if (!plan.undrainable.empty()) {
      std::string some;
      for (std::size_t i = 0; i < plan.undrainable.size() && i < 5; ++i) some += (i ? ", " : "") + plan.undrainable[i];
      warn(object, "CannotDrain",
           std::to_string(plan.undrainable.size()) + " partitions (" + some +
               (plan.undrainable.size() > 5 ? ", ..." : "") + ") have a replica on brokers " + id_list(leaving) +
               " and no other broker can take it: their replication factor needs more than the " +
               std::to_string(set.desired) + " brokers asked for; the StatefulSet stays at " +
               std::to_string(set.replicas));
    } else {
      last_warning_.clear();
    }
    if (floor <= set.desired && set.replicas > set.desired) {
      // Optimistic concurrency: a StatefulSet changed since it was read is looked at again.
      json patch = {{"metadata", {{"resourceVersion", object["metadata"].value("resourceVersion", "")}}},
                    {"spec", {{"replicas", set.desired}}}};
      if (!patch_broker_set(object, patch)) return {.failed = true};
      events_.record(object, kube::event_recorder::type::normal, "BrokersDrained", "Scale",
                     "brokers " + std::to_string(set.desired) + " to " + std::to_string(set.replicas - 1) +
                         " hold no replicas; scaling the StatefulSet to " + std::to_string(set.desired));
      FERRY_LOG(info, "balance") << "scaling " << options_.broker_set << " to " << set.desired;
    }
    // Once no broker is leaving, the external Services of the brokers the StatefulSet no longer runs go: once
    // per size, and again after a failure.
    if (set.replicas == set.desired && services_pruned_at_ != set.replicas) {
      const auto& metadata = object["metadata"];
      if (prune_external_services(api_, metadata.value("namespace", ""), metadata.value("name", ""), set.replicas))
        services_pruned_at_ = set.replicas;
    }
  }
  if (!start_moves(plan.moves)) return {.failed = true};
  // Moves complete on the controller's schedule and a cluster change queues the key again; this is a backstop.
  // The throttles of finished moves are removed on a later pass.
  const bool services_left = statefulset && services_pruned_at_ != statefulset->second.replicas;
  return plan.moves.empty() && leaving.empty() && !throttled && !services_left
             ? kube::reconcile_result{}
             : kube::reconcile_result{.requeue_after = 5s};
}

bool balance_controller::start_moves(const std::vector<replica_move>& moves) {
  std::map<std::string, std::map<partition_id, std::vector<broker_id>>> by_topic;
  for (const auto& m : moves) by_topic[m.topic].emplace(m.partition, m.target);
  for (const auto& [topic, targets] : by_topic) {
    if (auto moved = moves_.start(topic, targets); !moved) {
      FERRY_LOG(warn, "balance") << "moving replicas of " << topic << " failed: " << moved.error().message();
      return false;
    }
    for (const auto& [p, target] : targets) {
      FERRY_LOG(info, "balance") << "moving " << topic << "-" << p.value() << " to replicas " << id_list(target);
    }
  }
  return true;
}

bool balance_controller::patch_broker_set(const json& statefulset, const json& patch) {
  const auto& metadata = statefulset["metadata"];
  const auto path =
      "/apis/apps/v1/namespaces/" + metadata.value("namespace", "") + "/statefulsets/" + metadata.value("name", "");
  const auto answer = api_.send(kube::api_client::verb::patch, path, patch.dump(), kube::merge_patch);
  if (!answer) {
    FERRY_LOG(warn, "balance") << "patching " << options_.broker_set << ": " << answer.error().message();
    return false;
  }
  if (answer.value().status != 200) {
    FERRY_LOG(warn, "balance") << "patching " << options_.broker_set << ": HTTP " << answer.value().status << " "
                               << answer.value().body.substr(0, 300);
    return false;
  }
  return true;
}

void balance_controller::warn(const json& statefulset, std::string_view reason, const std::string& note) {
  if (note == last_warning_) return;
  last_warning_ = note;
  FERRY_LOG(warn, "balance") << options_.broker_set << ": " << note;
  events_.record(statefulset, kube::event_recorder::type::warning, reason, "Drain", note);
}

}  // namespace ferry::balance
