#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/broker_context.h"
#include "server/topic_admin.h"

namespace ferry::server {

// AlterPartitionReassignments for one topic (coord/reassignment.h has the protocol): each move is checked
// against the cluster view (the partition exists; the target names live brokers, each once) and against the
// assignment in ZooKeeper (a cancel needs a reassignment in progress; some in-sync replica stays assigned),
// then every acceptable move is written in one conditional update of the topic znode. The controller carries
// them out. Blocking on ZooKeeper: call through run_on_zookeeper.
struct partition_move {
  partition_id partition;
  std::optional<std::vector<broker_id>> target;  // nullopt: cancel the reassignment in progress
};
// One result per move, in order.
std::vector<topic_admin_result> reassign_partitions(broker_context& broker, const std::string& topic,
                                                    const std::vector<partition_move>& moves);

}  // namespace ferry::server
