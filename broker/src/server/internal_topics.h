#pragma once

#include <cstdint>
#include <optional>
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

// A coordinator's internal topic (__consumer_offsets, __transaction_state) as the broker's settings shape it.
struct internal_topic {
  std::string_view name;
  std::string_view owner;                // the coordinator's log category: "group", "txn"
  std::string_view partitions_setting;   // the setting that names its partition count
  std::string_view replication_setting;  // the setting that names its replication factor
  std::int32_t partitions = 0;
  std::int32_t replication_factor = 0;
  std::int32_t min_insync_replicas = 0;
  std::int32_t segment_bytes = 0;
  std::string_view compression;  // compression.type
};
[[nodiscard]] internal_topic offsets_topic(const config::broker_config& config);
[[nodiscard]] internal_topic transaction_topic(const config::broker_config& config);
// The internal topic of this name, if it is one.
[[nodiscard]] std::optional<internal_topic> internal_topic_named(const config::broker_config& config,
                                                                 std::string_view name);

// Where a coordinator is: the leader of its key's partition of the topic.
struct coordinator_location {
  protocol::error_code error = protocol::error_code::none;
  std::string message;
  const coord::broker_info* broker = nullptr;  // into the view it was found in
};
// COORDINATOR_NOT_AVAILABLE while the topic does not exist yet (missing_topic is set: create it, then let the
// client retry), has another partition count than its setting, or the partition has no live leader.
[[nodiscard]] coordinator_location find_coordinator(const internal_topic& topic, const coord::cluster_view& view,
                                                    std::int32_t partition, bool& missing_topic);

// Creates the topic as Kafka does: its partition count and replication factor, compacted, min.insync.replicas
// capped by the replicas. With fewer live brokers than the factor it creates nothing and answers
// INVALID_REPLICATION_FACTOR, as Kafka does: a topic created smaller would stay under-replicated for good (brokers
// of a new cluster start one by one). Blocking on ZooKeeper: call through run_on_zookeeper.
topic_admin_result create_internal_topic(broker_context& broker, const internal_topic& topic);

// A coordinator's topic without cleanup.policy=compact was created as an ordinary topic (by a client's
// auto-creation on a broker that allowed it, or by a tool) and would lose its records to retention.
[[nodiscard]] bool internal_topic_needs_repair(const internal_topic& topic, const coord::cluster_view& view);
// Sets its cleanup.policy to compact, keeping its other overrides, and says so in the log. Blocking: call through
// run_on_zookeeper.
result<void> repair_internal_topic(broker_context& broker, const internal_topic& topic);

}  // namespace ferry::server
