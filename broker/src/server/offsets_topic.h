#pragma once

#include <string>
#include <string_view>

#include "coord/cluster_view.h"
#include "protocol/error_code.h"
#include "server/broker_context.h"
#include "server/topic_admin.h"

namespace ferry::server {

// The broker's internal topics: clients read them, but never create, write or auto-create them as ordinary
// topics (Kafka's Topic.isInternal).
[[nodiscard]] bool is_internal_topic(std::string_view name);

// Where a group's coordinator is: the leader of the group's __consumer_offsets partition.
struct coordinator_location {
  protocol::error_code error = protocol::error_code::none;
  std::string message;
  const coord::broker_info* broker = nullptr;  // into the view it was found in
};
// COORDINATOR_NOT_AVAILABLE while the topic does not exist yet (missing_topic is set: create it, then let the
// client retry) or the partition has no live leader.
[[nodiscard]] coordinator_location find_group_coordinator(const broker_context& broker, const coord::cluster_view& view,
                                                          std::string_view group_id, bool& missing_topic);

// Creates __consumer_offsets as Kafka does: offsets.topic.num.partitions partitions,
// offsets.topic.replication.factor replicas capped by the live brokers, min.insync.replicas 2 where there are
// enough replicas, offsets.topic.segment.bytes segments. Blocking: call through run_blocking.
topic_admin_result create_offsets_topic(broker_context& broker);

// A __consumer_offsets without cleanup.policy=compact was created as an ordinary topic (by a client's
// auto-creation on a broker that allowed it, or by a tool) and would lose committed offsets to retention.
[[nodiscard]] bool offsets_topic_needs_repair(const coord::cluster_view& view);
// Sets its cleanup.policy to compact, keeping its other overrides, and says so in the log. Blocking: call through
// run_blocking.
result<void> repair_offsets_topic(broker_context& broker);

}  // namespace ferry::server
