#include "balance/balance_controller.h"

#include <map>

#include "base/log.h"
#include "coord/reassignment.h"

namespace ferry::balance {

kube::reconcile_result balance_controller::reconcile(const std::string& /*key*/) {
  using namespace std::chrono_literals;
  if (!cluster_.connected() || !cluster_.ready()) return {.requeue_after = 2s};
  const auto view = cluster_.view();
  const auto moves = plan_balance(*view, managed_topics_(), {.max_moves = max_moves_});
  if (moves.empty()) return {};
  std::map<std::string, std::vector<const replica_move*>> by_topic;
  for (const auto& m : moves) by_topic[m.topic].push_back(&m);
  for (const auto& [topic, topic_moves] : by_topic) {
    auto moved = cluster_.topics().alter_assignment(topic, [&](coord::layout::topic_assignment& t) -> result<bool> {
      for (const auto* m : topic_moves) {
        coord::set_assignment(t, m->partition, coord::reassign_to(coord::assignment_of(t, m->partition), m->target));
      }
      return true;
    });
    if (!moved) {
      FERRY_LOG(warn, "balance") << "moving replicas of " << topic << " failed: " << moved.error().message();
      return {.failed = true};
    }
    for (const auto* m : topic_moves) {
      FERRY_LOG(info, "balance") << "moving " << topic << "-" << m->partition.value() << " to replicas " << [&] {
        std::string list;
        for (const auto b : m->target) list += (list.empty() ? "" : ",") + std::to_string(b.value());
        return list;
      }();
    }
  }
  // The moves complete on the controller's schedule; a cluster change queues the key again, and this is a
  // backstop.
  return {.requeue_after = 5s};
}

}  // namespace ferry::balance
