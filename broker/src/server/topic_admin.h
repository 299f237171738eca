#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coord/layout.h"
#include "protocol/error_code.h"
#include "server/broker_context.h"

namespace ferry::server {

// Topic changes shared by several APIs (CreateTopics and Metadata's auto-creation; CreatePartitions),
// written to ZooKeeper through the cluster registry. Blocking on ZooKeeper: call through run_on_zookeeper.

struct topic_admin_result {
  protocol::error_code error = protocol::error_code::none;
  std::optional<std::string> message;
};

struct new_topic {
  std::string name;
  std::int32_t partitions = -1;                  // -1: num.partitions
  std::int16_t replication_factor = -1;          // -1: default.replication.factor
  coord::layout::replica_assignment assignment;  // explicit placement; empty: placed round-robin on live brokers
  std::map<std::string, std::string> config;
};

// Asked with the number of partitions a change creates, once every check passed and before it is written; false
// refuses the change with THROTTLING_QUOTA_EXCEEDED (the client's controller_mutation_rate: client_quota_use.h).
// Empty: no quota (the broker's own topics, auto-creation).
using mutation_gate = std::function<bool(std::int64_t partitions)>;

// Checks the name, counts, placement and configs; with validate_only, stops there.
topic_admin_result create_topic(broker_context& broker, const new_topic& topic, bool validate_only,
                                const mutation_gate& may_mutate = {});

// Grows a topic to `total` partitions, placing the new ones on live brokers (or as `assignment` says).
topic_admin_result add_partitions(broker_context& broker, const std::string& topic, std::int32_t total,
                                  const std::vector<std::vector<broker_id>>& assignment, bool validate_only,
                                  const mutation_gate& may_mutate = {});

// THROTTLING_QUOTA_EXCEEDED, with Kafka's message.
topic_admin_result throttling_quota_exceeded();

}  // namespace ferry::server

namespace ferry::server {

// Replaces a topic's config overrides after checking every name and value; with validate_only, only checks.
topic_admin_result set_topic_overrides(broker_context& broker, const std::string& topic,
                                       const std::map<std::string, std::string>& overrides, bool validate_only);

}  // namespace ferry::server
