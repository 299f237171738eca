#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/result.h"
#include "coord/metadata_table.h"
#include "coord/registry_task.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// ElectLeaders' election_type.
enum class election_type : std::int8_t { preferred = 0, unclean = 1 };

// One partition's outcome of ElectLeaders: success, or errc::election_not_needed,
// preferred_leader_not_available, eligible_leaders_not_available, no_node (no such partition) or
// bad_version (its state changed meanwhile; ask again).
struct election_result {
  topic_partition partition;
  std::error_code error;
};

// Leaders a controller elected (every state it wrote with a new leader), and of those, how many were not in
// sync: its share of the cluster's leader_elections_total and unclean_leader_elections_total.
struct election_counts {
  std::uint64_t elections = 0;
  std::uint64_t unclean = 0;
};

// Controller election and duties, as Kafka's ZooKeeper-mode controller does them: the broker that creates the
// ephemeral /controller (bumping /controller_epoch in the same multi-op) holds the role until its session
// ends. While it does, reconcile() runs after every change the worker reads:
//   - topics written without a topic id get one;
//   - topics marked in /admin/delete_topics lose their znodes (the marker last) once their live replicas have
//     deleted their logs, or with delete.topic.enable
//     false keep them and only lose the marker, as Kafka's processTopicDeletion does;
//   - new partitions get a state znode, led by their first live replica (NewPartition -> OnlinePartition);
//   - a partition whose leader died gets the next live in-sync replica, or with unclean.leader.election.enable
//     any live replica, and dead followers leave the ISR;
//   - a reassignment whose target replicas are all in sync completes (coord/reassignment.h);
//   - old /config/changes and /ferry/partition_state_changes nodes are purged.
// On request it also moves leadership back to preferred replicas (balance_leaders, elect_leaders).
// Every write is a multi-op behind a check of /controller_epoch, so a deposed controller cannot write. State
// writes go out in batches, each multi-op logging the states it writes in /ferry/partition_state_changes
// (metadata_table), so the brokers learn a broker failure's elections from a few reads. Topics whose znode is
// invalid (metadata_table) are left alone, and so are topics without an id until their new id is read.
//
// Worker-thread only, except is_active(), which any thread may call.
class controller {
 public:
  controller(zk_session& session, metadata_table& table, broker_id self, bool unclean_election_default,
             bool delete_topic_enable, task_sink enqueue)
      : session_(session),
        table_(table),
        self_(self),
        unclean_election_default_(unclean_election_default),
        delete_topic_enable_(delete_topic_enable),
        enqueue_(std::move(enqueue)) {}

  [[nodiscard]] bool is_active() const { return active_.load(); }
  // Any thread.
  [[nodiscard]] election_counts elections() const { return {elections_.load(), unclean_elections_.load()}; }

  // Reads /controller (watching it): runs for the role when nobody holds it, resigns when another broker does.
  result<void> refresh();
  // The session ended, and the role with it.
  void resign();
  // The duties above; errc::not_controller when a newer controller fenced a write.
  result<void> reconcile();
  // Removes the sequential children of `parent` older than Kafka's 15 minutes (changeExpirationMs);
  // `oldest_first` as metadata_table::refresh_config_changes and refresh_state_changes return them.
  result<void> purge_expired(std::string_view parent, const std::vector<std::string>& oldest_first);
  // ElectLeaders (kafka-leader-election.sh) for `partitions`, or every partition when nullopt. A preferred
  // election makes the preferred replica (the first assigned) the leader if it is alive and in sync; an
  // unclean one elects a leader for a partition without one, from any live replica if no in-sync one is.
  result<std::vector<election_result>> elect_leaders(election_type type,
                                                     const std::optional<std::vector<topic_partition>>& partitions);
  // Kafka's auto.leader.rebalance.enable check: for each live broker whose preferred partitions are led
  // elsewhere in more than `percentage` percent of cases, the preferred elections that can be held are.
  result<void> balance_leaders(std::int32_t percentage);

 private:
  // A change of an existing partition state: the state to write over the version it was decided from.
  struct state_update {
    std::string topic;
    partition_id partition;
    layout::leader_and_isr next;
    std::int32_t expected_version = 0;
    bool unclean = false;  // an out-of-sync replica was elected
  };

  result<void> try_elect();
  void become_controller(std::int32_t epoch, std::int32_t epoch_version);
  // Runs `ops` behind the check of /controller_epoch; on failure, `failed_op` (if given) is the index in
  // `ops` of the operation that failed.
  result<void> controller_write(std::vector<zk_op> ops, std::size_t* failed_op = nullptr);
  result<void> assign_topic_id(const std::string& name);
  // Whether every live replica of a topic marked for deletion has deleted its logs of it (acknowledged under the
  // marker), as Kafka's controller waits for the answers to its StopReplica(delete): a broker that saw the marker
  // only after the topic's nodes went would set its logs aside instead. A replica that is down sets them aside
  // when it comes back to find the topic gone.
  result<bool> live_replicas_deleted_their_logs(const std::string& name);
  result<void> delete_topic_nodes(const std::string& name);
  // delete.topic.enable is false: removes the marker of `name` and keeps the topic.
  result<void> refuse_deletion(const std::string& name);
  result<void> create_partition_states(const std::string& name, const std::vector<partition_id>& missing);
  // What the election rules make of a partition's state, or nullopt when it stays as it is.
  [[nodiscard]] std::optional<state_update> next_state(const std::string& name, partition_id p,
                                                       bool allow_unclean) const;
  // The state a preferred election would write, or why there is none.
  [[nodiscard]] result<state_update> preferred_election(const std::string& name, partition_id p) const;
  result<void> write_states(const std::vector<state_update>& updates);
  // Completes the reassignments of `name` whose targets are all in sync (coord/reassignment.h): the new
  // partition states, their change log node and the topic znode with only the targets, in one multi-op.
  result<void> complete_reassignments(const std::string& name);
  [[nodiscard]] bool unclean_election_allowed(const topic_info& topic) const;
  // The newest registration's czxid: a lower bound of the zxid of a state this controller writes next, as
  // every broker it decided about registered before the write (partition_state::written_zxid).
  [[nodiscard]] std::int64_t newest_registration() const;

  zk_session& session_;
  metadata_table& table_;
  const broker_id self_;
  const bool unclean_election_default_;  // the broker's unclean.leader.election.enable
  const bool delete_topic_enable_;       // the broker's delete.topic.enable
  const task_sink enqueue_;
  std::atomic<bool> active_{false};
  std::atomic<std::uint64_t> elections_{0};
  std::atomic<std::uint64_t> unclean_elections_{0};
  std::int32_t epoch_ = 0;
  std::int32_t epoch_version_ = 0;
};

}  // namespace ferry::coord
