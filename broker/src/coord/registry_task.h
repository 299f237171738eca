#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>

namespace ferry::coord {

// One unit of the registry worker's work: a znode (or group of znodes) to read again, usually because a
// watch on it fired. Tasks are kept in a set, so repeated events for one znode fold into one read.
enum class task_kind {
  new_session,  // after a session expiry: re-register, forget watches, resync
  resync,       // re-read everything
  brokers,
  deletions,         // children of /admin/delete_topics
  shutting_down,     // children of /ferry/controlled_shutdown
  offline_replicas,  // children of /ferry/offline_replicas
  topics,            // children of /brokers/topics
  topic,
  partition_state,  // one state znode, read again after a lost race
  state_changes,    // children of /ferry/partition_state_changes
  config_changes,
  acl_changes,           // children of /kafka-acl-changes (LITERAL patterns')
  extended_acl_changes,  // children of /kafka-acl-extended-changes (PREFIXED patterns')
  controller,
  reconcile,       // nothing to read: only makes the worker run (controller duties, new listeners)
  leader_balance,  // the controller's periodic check of leader.imbalance.per.broker.percentage
};

struct task {
  explicit task(task_kind k, std::string t = {}, std::int32_t p = -1) : kind(k), topic(std::move(t)), partition(p) {}
  task_kind kind;
  std::string topic;
  std::int32_t partition;
  auto operator<=>(const task&) const = default;
};

// What a task is about, for log lines.
[[nodiscard]] std::string describe(const task& t);

// Hands a task to the worker; `fired_watch` is the key of the watch that fired (it must be set again), or
// empty. Callable from any thread, ZooKeeper's completion thread included.
using task_sink = std::function<void(task, std::string fired_watch)>;

}  // namespace ferry::coord
