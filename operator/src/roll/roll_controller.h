#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "coord/cluster_observer.h"
#include "kube/api_client.h"
#include "kube/controller.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "roll/roll_plan.h"

namespace ferry::roll {

// The body of an eviction (policy/v1) of pod `name`; with a uid, only that pod (one re-created meanwhile is
// left alone).
nlohmann::json eviction(const std::string& namespace_, const std::string& name, const std::string& uid);

// What the API server's answer to an eviction means for the roll.
struct eviction_outcome {
  enum class kind {
    evicted,  // the pod is being deleted
    gone,     // deleted or replaced already: the next pass looks again
    refused,  // a PodDisruptionBudget does not allow it now (429 with cause DisruptionBudget): wait
    failed,
  };
  kind what = kind::failed;
  std::string message;  // for refused: the API server's reason, e.g. the budget's healthy pod count
};
eviction_outcome read_eviction_answer(unsigned status, const std::string& body);

// Written on the brokers' StatefulSet: how far the roll is and what it waits for.
inline constexpr std::string_view roll_annotation = "ferry.dev/roll";

// Rolls the brokers' StatefulSet when its update strategy is OnDelete (the chart's, with the operator): evicts
// one outdated broker pod at a time, chosen by plan_roll, so that no partition loses an in-sync replica it
// cannot spare; the Eviction API lets the brokers' PodDisruptionBudgets hold a restart back, as they hold a
// node drain. Events RollingBroker (a pod evicted) and RollWaiting (why the next one waits, once per distinct
// reason, a PodDisruptionBudget's refusal included); the annotation ferry.dev/roll on the StatefulSet says
// where the roll is. With another update strategy it does nothing: the StatefulSet controller rolls. One key
// ("roll"), queued on changes of the StatefulSet and its pods, and looked at every 2 s while pods are outdated
// (the ISR changes in ZooKeeper), 5 s while a budget refuses; only the Lease holder runs it.
class roll_controller {
 public:
  static constexpr std::string_view key = "roll";

  // `broker_set` is "namespace/name"; `statefulsets` and `pods` are informers of that StatefulSet and of the
  // pods of its namespace.
  roll_controller(kube::api_client& api, kube::event_recorder& events, coord::cluster_observer& cluster,
                  std::string broker_set, kube::informer& statefulsets, kube::informer& pods)
      : api_(api),
        events_(events),
        cluster_(cluster),
        broker_set_(std::move(broker_set)),
        statefulsets_(statefulsets),
        pods_(pods) {}

  kube::reconcile_result reconcile(const std::string& key);

 private:
  eviction_outcome evict_pod(const nlohmann::json& statefulset, const std::string& name, const std::string& why);
  void wait_for(const nlohmann::json& statefulset, const std::string& progress, const std::string& why);
  void report(const nlohmann::json& statefulset, const std::string& progress);

  kube::api_client& api_;
  kube::event_recorder& events_;
  coord::cluster_observer& cluster_;
  const std::string broker_set_;
  kube::informer& statefulsets_;
  kube::informer& pods_;
  std::string last_wait_;  // only the worker touches it
};

// The StatefulSet's pods (controlled by it, named <name>-<ordinal>) as plan_roll reads them.
std::vector<broker_pod> broker_pods(const nlohmann::json& statefulset, const std::vector<kube::informer::object>& pods);

}  // namespace ferry::roll
