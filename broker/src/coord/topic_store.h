#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "coord/cluster_view.h"
#include "coord/config_store.h"
#include "coord/layout.h"
#include "coord/uuid.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// The writes request handlers make to ZooKeeper on behalf of clients (CreateTopics, DeleteTopics,
// AlterConfigs, CreatePartitions) and of partition leaders (ISR changes), in Kafka's layout. The controller
// and the brokers' metadata tables pick the changes up through their watches. Blocking and thread-safe.
class topic_store {
 public:
  topic_store(zk_session& session, config_store& configs) : session_(session), configs_(configs) {}

  // Writes /brokers/topics/<name> (with `topic_id`, a new random one by default) and /config/topics/<name> in
  // one multi-op and returns the topic id. `assignment` must number partitions 0..n-1, each with distinct
  // replicas. errc::node_exists if the topic exists (including while it is being deleted);
  // errc::invalid_argument for a bad name or assignment. The controller then creates the partition states.
  result<uuid> create_topic(std::string_view name, const layout::replica_assignment& assignment,
                            const layout::config_map& config, uuid topic_id = uuid::random());
  // Marks the topic for deletion (/admin/delete_topics/<name>); the controller deletes it. errc::no_node if
  // the topic does not exist; success if it is already marked.
  result<void> delete_topic(std::string_view name);
  // Replaces the topic's config overrides and announces the change under /config/changes.
  result<void> set_topic_config(std::string_view name, const layout::config_map& config);
  // The overrides as ZooKeeper holds them now (a broker's view may lag behind a change made through another
  // broker); for read-modify-write changes such as IncrementalAlterConfigs.
  result<layout::config_map> read_topic_config(std::string_view name);
  // `assignment` is the new full assignment: the existing partitions unchanged plus new ones numbered on.
  // Conditional on the topic znode's version: errc::bad_version if it changed meanwhile.
  result<void> add_partitions(std::string_view name, const layout::replica_assignment& assignment);
  // Read-modify-write of /brokers/topics/<name> (reassignments): `change` edits the assignment as ZooKeeper
  // holds it now and says whether it changed anything (nothing is written if not), or fails, which ends the
  // call with its error; the write is conditional on the version read and retried a few times on a conflict.
  // errc::no_node if the topic does not exist.
  result<void> alter_assignment(std::string_view name,
                                const std::function<result<bool>(layout::topic_assignment&)>& change);

 private:
  zk_session& session_;
  config_store& configs_;
};

// Claims the next block of producer ids (layout::producer_id_block_size of them) for `self` through a
// conditional update of /latest_producer_id_block, as Kafka's ZooKeeper-mode brokers do. Blocking.
result<layout::producer_id_block> allocate_producer_id_block(zk_session& session, broker_id self);

}  // namespace ferry::coord
