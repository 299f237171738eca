#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "balance/broker_set.h"
#include "balance/replica_balance.h"
#include "balance/throttled_moves.h"
#include "coord/cluster_observer.h"
#include "kube/api_client.h"
#include "kube/controller.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/metrics.h"

namespace ferry::balance {

struct balance_options {
  // Reassignments in flight at once across the cluster.
  std::size_t max_moves = 10;
  // Whether managed topics are spread evenly over the brokers (false: brokers are only drained).
  bool spread = true;
  // The brokers' StatefulSet ("namespace/name"; empty: none): its ferry.dev/brokers annotation asks for a
  // broker count, and the operator keeps its ferry.dev/replica-floor annotation, which the scale-down guard
  // (operator/deploy/broker-scale-guard.yaml) reads.
  std::string broker_set;
};

// Keeps replicas where the brokers are. When brokers are added (or the spread drifts) it spreads the managed
// topics over them; when the brokers' StatefulSet asks for fewer brokers it empties the leaving ones (broker i
// is pod i, so the highest ids leave) of every topic's replicas and then scales the StatefulSet down. Before
// it starts moves it raises ferry.dev/replica-floor to cover them, and it lowers the floor only once the
// replicas are gone, so the guard never lets a pod go that holds a replica. At most `max_moves` reassignments
// are in flight. One key ("cluster"), queued on every cluster or StatefulSet change; only the Lease holder runs.
class balance_controller {
 public:
  static constexpr std::string_view key = "cluster";

  balance_controller(kube::api_client& api, kube::event_recorder& events, coord::cluster_observer& cluster,
                     throttled_moves& moves, kube::operator_metrics& metrics,
                     std::function<std::set<std::string>()> managed_topics, balance_options options)
      : api_(api),
        events_(events),
        metrics_(metrics),
        cluster_(cluster),
        moves_(moves),
        managed_topics_(std::move(managed_topics)),
        options_(std::move(options)) {}

  // The informer of the brokers' StatefulSet (when options.broker_set is set).
  void set_broker_sets(kube::informer& statefulsets) { broker_sets_ = &statefulsets; }

  kube::reconcile_result reconcile(const std::string& key);

  // Brokers being emptied before they go: new topics and partitions are not placed on them.
  [[nodiscard]] std::set<broker_id> leaving() const;

 private:
  // The StatefulSet and what it asks for; nullopt when there is none (or it cannot be read: an Event says why).
  std::optional<std::pair<nlohmann::json, broker_set>> read_broker_set_object();
  bool start_moves(const std::vector<replica_move>& moves);
  bool patch_broker_set(const nlohmann::json& statefulset, const nlohmann::json& patch);
  // A Warning Event, once per distinct message (a reconcile every few seconds must not flood them).
  void warn(const nlohmann::json& statefulset, std::string_view reason, const std::string& note);

  kube::api_client& api_;
  kube::event_recorder& events_;
  kube::operator_metrics& metrics_;
  coord::cluster_observer& cluster_;
  throttled_moves& moves_;
  const std::function<std::set<std::string>()> managed_topics_;
  const balance_options options_;
  kube::informer* broker_sets_ = nullptr;
  std::string last_warning_;                        // only the worker touches it
  std::optional<std::int32_t> services_pruned_at_;  // the StatefulSet size its external Services last matched

  mutable std::mutex mutex_;
  std::set<broker_id> leaving_;
};

}  // namespace ferry::balance
