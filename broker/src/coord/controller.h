#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "coord/metadata_table.h"
#include "coord/registry_task.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// Controller election and duties, as Kafka's ZooKeeper-mode controller does them: the broker that creates the
// ephemeral /controller (bumping /controller_epoch in the same multi-op) holds the role until its session
// ends. While it does, reconcile() runs after every change the worker reads:
//   - topics written without a topic id get one;
//   - topics marked in /admin/delete_topics lose their znodes (the marker last);
//   - new partitions get a state znode, led by their first live replica (NewPartition -> OnlinePartition);
//   - a partition whose leader died gets the next live in-sync replica, or with unclean.leader.election.enable
//     any live replica, and dead followers leave the ISR;
//   - old /config/changes notifications are purged.
// Every write is a multi-op behind a check of /controller_epoch, so a deposed controller cannot write.
// Topics whose znode is invalid (metadata_table) are left alone.
//
// Worker-thread only, except is_active(), which any thread may call.
class controller {
 public:
  controller(zk_session& session, metadata_table& table, broker_id self, bool unclean_election_default,
             task_sink enqueue)
      : session_(session),
        table_(table),
        self_(self),
        unclean_election_default_(unclean_election_default),
        enqueue_(std::move(enqueue)) {}

  [[nodiscard]] bool is_active() const { return active_.load(); }

  // Reads /controller (watching it): runs for the role when nobody holds it, resigns when another broker does.
  result<void> refresh();
  // The session ended, and the role with it.
  void resign();
  // The duties above; errc::not_controller when a newer controller fenced a write.
  result<void> reconcile();
  // Removes notifications older than Kafka's 15 minutes (changeExpirationMs); `children` as
  // metadata_table::refresh_config_changes returns them.
  result<void> purge_config_changes(const std::vector<std::string>& children);

 private:
  result<void> try_elect();
  void become_controller(std::int32_t epoch, std::int32_t epoch_version);
  result<void> controller_write(std::vector<zk_op> ops);
  result<void> assign_topic_id(const std::string& name);
  result<void> delete_topic_nodes(const std::string& name);
  result<void> create_partition_states(const std::string& name, const std::vector<partition_id>& missing);
  result<void> elect_leader(const std::string& name, partition_id p);
  [[nodiscard]] bool unclean_election_allowed(const topic_info& topic) const;

  zk_session& session_;
  metadata_table& table_;
  const broker_id self_;
  const bool unclean_election_default_;  // the broker's unclean.leader.election.enable
  const task_sink enqueue_;
  std::atomic<bool> active_{false};
  std::int32_t epoch_ = 0;
  std::int32_t epoch_version_ = 0;
};

}  // namespace ferry::coord
