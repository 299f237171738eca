#include "server/reassignments.h"

#include <algorithm>

#include "base/log.h"
#include "coord/reassignment.h"
#include "server/error_mapping.h"

namespace ferry::server {
namespace {

using protocol::error_code;

std::string partition_name(const std::string& topic, partition_id p) {
  return "partition " + topic + "-" + std::to_string(p.value());
}

// What is wrong with a target replica list, as Kafka's controller checks it, or nullopt.
std::optional<std::string> target_problem(const coord::cluster_view& view, const std::vector<broker_id>& target) {
  if (target.empty()) return "the replica list is empty";
  auto sorted = target;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return "the replica list names a broker twice";
  for (const auto id : target)
    if (!view.is_live(id)) return "broker " + std::to_string(id.value()) + " is not a live broker";
  return std::nullopt;
}

}  // namespace

std::vector<topic_admin_result> reassign_partitions(broker_context& broker, const std::string& topic,
                                                    const std::vector<partition_move>& moves) {
  std::vector<topic_admin_result> results(moves.size());
  const auto view = broker.cluster.view();
  const auto* info = view->find_topic(topic);
  if (info == nullptr || info->marked_for_deletion || !info->valid()) {
    const auto code =
        info != nullptr && !info->valid() ? error_code::unknown_server_error : error_code::unknown_topic_or_partition;
    for (auto& r : results)
      r = {code, info != nullptr && !info->valid()
                     ? "the assignment of topic '" + topic + "' in ZooKeeper cannot be read: " + info->invalid
                     : "topic '" + topic + "' does not exist"};
    return results;
  }
  std::vector<std::size_t> acceptable;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const auto& move = moves[i];
    if (!info->partitions.contains(move.partition)) {
      results[i] = {error_code::unknown_topic_or_partition, partition_name(topic, move.partition) + " does not exist"};
    } else if (const auto problem = move.target ? target_problem(*view, *move.target) : std::nullopt) {
      results[i] = {error_code::invalid_replica_assignment, partition_name(topic, move.partition) + ": " + *problem};
    } else {
      acceptable.push_back(i);
    }
  }
  if (acceptable.empty()) return results;

  // Decided again on every attempt, against the assignment ZooKeeper holds then.
  std::vector<topic_admin_result> decided;
  const auto apply = [&](coord::layout::topic_assignment& assignment) -> result<bool> {
    decided.assign(moves.size(), {});
    bool changed = false;
    for (const auto i : acceptable) {
      const auto& move = moves[i];
      const auto current = coord::assignment_of(assignment, move.partition);
      if (current.replicas.empty()) {
        decided[i] = {error_code::unknown_topic_or_partition,
                      partition_name(topic, move.partition) + " does not exist"};
        continue;
      }
      if (!move.target && current.adding.empty() && current.removing.empty()) {
        decided[i] = {error_code::no_reassignment_in_progress,
                      partition_name(topic, move.partition) + " has no reassignment in progress"};
        continue;
      }
      auto next = coord::reassign_to(current, move.target ? *move.target : coord::original_replicas(current));
      // Replicas that a replaced or cancelled move drops may be the only ones in sync: refuse rather than lose them.
      const auto& partition = info->partitions.at(move.partition);  // checked above, against the view
      if (partition.state) {
        const auto& isr = partition.state->isr;
        const bool keeps_one = std::any_of(isr.begin(), isr.end(), [&](broker_id r) {
          return view->is_live(r) && std::find(next.replicas.begin(), next.replicas.end(), r) != next.replicas.end();
        });
        if (!keeps_one) {
          decided[i] = {error_code::invalid_replica_assignment,
                        partition_name(topic, move.partition) + ": no live in-sync replica would stay assigned"};
          continue;
        }
      }
      if (next == current) continue;
      coord::set_assignment(assignment, move.partition, std::move(next));
      changed = true;
    }
    return changed;
  };
  const auto written = broker.writes.alter_assignment(topic, apply);
  for (const auto i : acceptable) {
    if (!written) {
      results[i] = {to_kafka_error(written.error()), written.error().message()};
    } else {
      results[i] = decided[i];
      if (results[i].error == error_code::none)
        FERRY_LOG(info, "server") << partition_name(topic, moves[i].partition)
                                  << (moves[i].target ? ": reassignment started" : ": reassignment cancelled");
    }
  }
  return results;
}

}  // namespace ferry::server
