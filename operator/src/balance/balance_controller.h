#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>

#include "balance/replica_balance.h"
#include "coord/cluster_observer.h"
#include "kube/controller.h"

namespace ferry::balance {

// Keeps the managed topics' replicas spread over the brokers: when brokers are added (or the spread drifts),
// it starts the moves plan_balance proposes, at most `max_moves` reassignments in flight across the cluster,
// and looks again whenever the cluster changes (a reassignment completing is a change). One key ("cluster"),
// so one worker at a time; only the Lease holder runs it.
class balance_controller {
 public:
  static constexpr std::string_view key = "cluster";

  balance_controller(coord::cluster_observer& cluster, std::function<std::set<std::string>()> managed_topics,
                     std::size_t max_moves)
      : cluster_(cluster), managed_topics_(std::move(managed_topics)), max_moves_(max_moves) {}

  kube::reconcile_result reconcile(const std::string& key);

 private:
  coord::cluster_observer& cluster_;
  const std::function<std::set<std::string>()> managed_topics_;
  const std::size_t max_moves_;
};

}  // namespace ferry::balance
