#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "coord/cluster_view.h"
#include "coord/layout.h"

namespace ferry::topics {

// What a Topic resource asks for.
struct topic_spec {
  std::string name;  // spec.topicName, or metadata.name
  std::int32_t partitions = 0;
  std::int32_t replication_factor = 0;
  coord::layout::config_map config;
  // Config keys the operator leaves as they are in the cluster (spec.unmanagedConfigKeys).
  std::set<std::string> unmanaged_config;
};

// Topic config keys nobody reverts unless spec.config sets them: the replication throttles that
// kafka-reassign-partitions --throttle (or the operator's own moves) put on a topic while data moves.
inline const std::set<std::string>& throttle_config_keys() {
  static const std::set<std::string> keys = {"leader.replication.throttled.replicas",
                                             "follower.replication.throttled.replicas"};
  return keys;
}

// Why a resource cannot be reconciled as it stands: the Ready condition's reason (CamelCase) and a message a
// person can act on. Nothing is changed in the cluster.
struct refusal {
  std::string reason;
  std::string message;
};

// Names starting with "__" belong to the brokers (__consumer_offsets, __transaction_state): no resource may
// create, adopt, configure or delete them.
bool is_internal_topic(std::string_view name);

// The spec of a Topic resource, checked: a legal Kafka topic name that is not internal (NotSupported), counts
// of at least 1, and config names and values the brokers accept (InvalidConfig otherwise). Config values may be
// strings, numbers or booleans (Strimzi accepts them too); they become Kafka's strings ("604800000", "0.5",
// "true").
std::variant<topic_spec, refusal> read_spec(const nlohmann::json& resource);

// What it takes to bring the cluster to the spec.
struct topic_changes {
  bool create = false;
  // For a new topic, its whole assignment; when growing, the existing partitions followed by the new ones.
  std::optional<coord::layout::replica_assignment> assignment;
  std::optional<coord::layout::config_map> config;  // the overrides to write, when they differ
  // Replication factor changes: each moving partition's new replicas (the preferred leader kept first); the
  // caller starts as many as its move budget allows.
  std::map<partition_id, std::vector<broker_id>> moves;

  [[nodiscard]] bool empty() const { return !create && !assignment && !config && moves.empty(); }
};

// One-way reconciliation: the spec wins. `live` is the topic as ZooKeeper has it (null if it does not exist);
// `start_index` places a new topic's first replica (random, as Kafka picks it, so topics spread).
// A refusal when the replication factor is below min.insync.replicas (InvalidConfig: the topic's or the brokers'
// dynamic default), when the spec asks for fewer partitions than exist (NotSupported), more replicas than there are
// live brokers (InsufficientBrokers), or for a replication factor change while a reassignment is running
// (ReassignmentInProgress) of a partition that still needs a change; a running reassignment that already reaches
// the spec is no reason to wait. Config overrides follow spec.config except for the throttle keys and
// spec.unmanagedConfigKeys, which keep their live values unless spec.config names them.
std::variant<topic_changes, refusal> plan_changes(const topic_spec& spec, const coord::topic_info* live,
                                                  const coord::cluster_view& view, std::int32_t start_index);

// The new replicas of each partition whose replication factor differs from `replication_factor`: added
// brokers come from racks the partition does not use yet, then from the brokers with the fewest replicas;
// removed ones are taken from the end, so the preferred leader stays. nullopt when there are not enough
// live brokers.
std::optional<std::map<partition_id, std::vector<broker_id>>> replication_moves(const coord::topic_info& topic,
                                                                                const coord::cluster_view& view,
                                                                                std::int32_t replication_factor);

// The state of a topic's partitions, for status.partitions: only what changes when the topic does or a partition
// goes offline (ISR and leadership changes would rewrite every status in the cluster on each broker restart;
// they belong in Prometheus).
struct partition_summary {
  std::int32_t count = 0;
  std::int32_t offline = 0;  // no leader (or not created yet)
  std::int32_t reassigning = 0;

  bool operator==(const partition_summary&) const = default;
};
partition_summary summarize(const coord::topic_info& topic);

// Partitions whose (target) replica count differs from `replication_factor`: moves not started yet.
std::int32_t pending_replication_moves(const coord::topic_info& topic, std::int32_t replication_factor);

}  // namespace ferry::topics
