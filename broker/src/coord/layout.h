#pragma once

// Kafka's ZooKeeper-mode layout (ZkData.scala, Kafka 2.8-3.x): znode paths and the JSON of each znode,
// so Ferry brokers, the operator and Kafka's own tools read and write the same tree. The contract is
// written up in docs/zookeeper-layout.md. Decoders never throw: malformed content is errc::invalid_data.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "coord/uuid.h"
#include "model/ids.h"

namespace ferry::coord::layout {

inline constexpr std::string_view brokers_ids_path = "/brokers/ids";
inline constexpr std::string_view brokers_topics_path = "/brokers/topics";
inline constexpr std::string_view config_topics_path = "/config/topics";
inline constexpr std::string_view config_brokers_path = "/config/brokers";
// /config/users/<sanitized user>: a user's SCRAM credentials beside its quotas.
inline constexpr std::string_view config_users_path = "/config/users";
// /config/clients/<sanitized client id> and /config/users/<sanitized user>/clients/<sanitized client id>: client
// quotas. "<default>" (default_entity) stands for every user or client id.
inline constexpr std::string_view config_clients_path = "/config/clients";
inline constexpr std::string_view default_entity = "<default>";
// The /config/brokers entity whose dynamic settings apply to every broker without its own.
inline constexpr std::string_view default_broker_entity = "<default>";
inline constexpr std::string_view config_changes_path = "/config/changes";
inline constexpr std::string_view config_change_prefix = "config_change_";
inline constexpr std::string_view delete_topics_path = "/admin/delete_topics";
inline constexpr std::string_view controller_path = "/controller";
inline constexpr std::string_view controller_epoch_path = "/controller_epoch";
inline constexpr std::string_view cluster_id_path = "/cluster/id";
inline constexpr std::string_view producer_id_block_path = "/latest_producer_id_block";
// Ferry's own: the log of partition state writes that brokers follow instead of watching every state znode.
inline constexpr std::string_view partition_state_changes_path = "/ferry/partition_state_changes";
inline constexpr std::string_view partition_state_change_prefix = "state_change_";
// Ferry's own: /ferry/controlled_shutdown/<id>, ephemeral, no data: broker <id> is shutting down and asks the
// controller to move its leaderships away (Kafka's ControlledShutdown request).
inline constexpr std::string_view controlled_shutdown_path = "/ferry/controlled_shutdown";
// Ferry's own: /ferry/offline_replicas/<id>_<dir>, ephemeral: the partitions of broker <id> whose log dir <dir>
// (its place in log.dirs) went offline; the controller treats those replicas as dead (Kafka's
// /log_dir_event_notification and the LeaderAndIsr answer that names the offline replicas, in one).
inline constexpr std::string_view offline_replicas_path = "/ferry/offline_replicas";

// Ids per block handed out by /latest_producer_id_block (Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
inline constexpr std::int64_t producer_id_block_size = 1000;

std::string broker_path(broker_id id);
std::string topic_path(std::string_view topic);
std::string topic_partitions_path(std::string_view topic);
std::string partition_path(std::string_view topic, partition_id p);
std::string partition_state_path(std::string_view topic, partition_id p);
std::string topic_config_path(std::string_view topic);
// /config/<entity_type>/<name>: entity_type "topics", "brokers" or "users" (a sanitized user name).
std::string entity_config_path(std::string_view entity_type, std::string_view name);
std::string delete_topic_path(std::string_view topic);
// Ferry's own: /admin/delete_topics/<topic>/<id>, persistent and empty: broker <id> deleted its logs of the topic.
std::string deletion_acknowledgement_path(std::string_view topic, broker_id id);
// "<parent>/<child>".
std::string child_path(std::string_view parent, std::string_view child);

// The sequence number of a "config_change_0000000042" child of /config/changes; nullopt for other names.
std::optional<std::int64_t> config_change_sequence(std::string_view child_name);
// The same for a "state_change_0000000042" child of /ferry/partition_state_changes.
std::optional<std::int64_t> partition_state_change_sequence(std::string_view child_name);

// A user or client name as a znode name, as Kafka's Sanitizer writes it: java.net.URLEncoder's UTF-8 form
// (letters, digits and ".-_" kept, every other byte %XX), with "*" and a space also written %2A and %20.
std::string sanitize(std::string_view name);
// The reverse, as java.net.URLDecoder ("+" is a space); nullopt for a broken %XX escape.
std::optional<std::string> desanitize(std::string_view sanitized);

// Kafka's legal topic names: 1-249 characters of [a-zA-Z0-9._-], and not "." or "..".
bool is_valid_topic_name(std::string_view topic);

// One listener of a broker, written "PLAINTEXT://host:9092" (IPv6 hosts bracketed); the security protocol
// travels separately in listener_security_protocol_map.
struct endpoint {
  std::string listener;
  std::string security_protocol;
  std::string host;
  std::int32_t port = -1;

  bool operator==(const endpoint&) const = default;
};
// "<listener>://<host>:<port>"; decode_endpoint sets security_protocol to the listener name.
std::string encode_endpoint(const endpoint& e);
result<endpoint> decode_endpoint(std::string_view text);

// /brokers/ids/<id>, EPHEMERAL, version 5.
struct broker_registration {
  std::string host;  // of the first PLAINTEXT endpoint; empty if there is none
  std::int32_t port = -1;
  std::optional<std::string> rack;
  std::vector<endpoint> endpoints;
  std::int64_t timestamp_ms = 0;
  std::optional<std::string> schema_registry;  // Ferry's own field: the broker's schema registry URL

  bool operator==(const broker_registration&) const = default;
};
std::string encode_broker(const broker_registration& b);
result<broker_registration> decode_broker(std::string_view json);

using replica_assignment = std::map<partition_id, std::vector<broker_id>>;

// /brokers/topics/<topic>, PERSISTENT, version 3. Versions 1 and 2 (no topic_id) decode with a zero id,
// which the controller replaces with a random one. While a partition is being reassigned (KIP-455), its
// `partitions` entry is the target replicas followed by the original ones not in the target, `adding` lists the
// targets that are new and `removing` the originals that are not targets; partitions not being reassigned have
// no entry in either.
struct topic_assignment {
  replica_assignment partitions;
  uuid topic_id;
  replica_assignment adding;
  replica_assignment removing;

  bool operator==(const topic_assignment&) const = default;
};
std::string encode_topic(const topic_assignment& t);
result<topic_assignment> decode_topic(std::string_view json);

// /brokers/topics/<topic>/partitions/<p>/state, PERSISTENT, version 1.
struct leader_and_isr {
  broker_id leader = no_broker;
  leader_epoch epoch{0};
  std::vector<broker_id> isr;
  std::int32_t controller_epoch = 0;

  bool operator==(const leader_and_isr&) const = default;
};
std::string encode_partition_state(const leader_and_isr& s);
result<leader_and_isr> decode_partition_state(std::string_view json);

// /ferry/partition_state_changes/state_change_<seq>, PERSISTENT_SEQUENTIAL, version 1: the partition states
// one multi-op wrote, each with the data version its state znode has after that write, created in the same
// multi-op. {"version":1,"partitions":[{"topic":"t","topic_id":"<base64>","partition":0,"state_version":3,
// "leader":1,"leader_epoch":2,"isr":[1,2],"controller_epoch":7}]}
struct partition_state_change {
  std::string topic;
  uuid topic_id;
  partition_id partition{0};
  std::int32_t state_version = 0;
  leader_and_isr state;

  bool operator==(const partition_state_change&) const = default;
};
std::string encode_partition_state_changes(const std::vector<partition_state_change>& changes);
result<std::vector<partition_state_change>> decode_partition_state_changes(std::string_view json);

// /config/topics/<topic> and /config/brokers/<id or "<default>">, PERSISTENT, version 1; every value is a
// string.
using config_map = std::map<std::string, std::string>;
std::string encode_entity_config(const config_map& config);
result<config_map> decode_entity_config(std::string_view json);

// /config/changes/config_change_<seq>, PERSISTENT_SEQUENTIAL. Written as version 2
// ({"entity_path":"topics/<t>"}); version 1 ({"entity_type":"topics","entity_name":"<t>"}) also decodes.
struct config_change {
  std::string entity_type;  // "topics" or "brokers"
  std::string entity_name;

  bool operator==(const config_change&) const = default;
};
std::string encode_config_change(const config_change& c);
result<config_change> decode_config_change(std::string_view json);

// /controller, EPHEMERAL, version 2 (version 1, Kafka 2.x, also decodes).
struct controller_registration {
  broker_id id = no_broker;
  std::int64_t timestamp_ms = 0;

  bool operator==(const controller_registration&) const = default;
};
std::string encode_controller(const controller_registration& c);
result<controller_registration> decode_controller(std::string_view json);

// /ferry/offline_replicas/<id>_<dir>, EPHEMERAL: {"version":1,"partitions":[{"topic":"t","partition":0},...]}.
std::string encode_offline_replicas(const std::vector<topic_partition>& partitions);
result<std::vector<topic_partition>> decode_offline_replicas(std::string_view json);
// The child's name, and the broker a child names (nullopt for a name that is not one).
std::string offline_replicas_child(broker_id id, std::size_t dir);
std::optional<broker_id> offline_replicas_broker(std::string_view child);

// /controller_epoch, PERSISTENT: a plain decimal integer, not JSON.
std::string encode_controller_epoch(std::int32_t epoch);
result<std::int32_t> decode_controller_epoch(std::string_view text);

// /cluster/id, PERSISTENT: {"version":"1","id":"<22-character base64 uuid>"} (version is a string here).
std::string encode_cluster_id(std::string_view id);
result<std::string> decode_cluster_id(std::string_view json);

// /latest_producer_id_block, PERSISTENT: the last block handed out; first and last are inclusive and
// written as strings.
struct producer_id_block {
  broker_id broker = no_broker;
  std::int64_t first = 0;
  std::int64_t last = 0;

  bool operator==(const producer_id_block&) const = default;
};
std::string encode_producer_id_block(const producer_id_block& b);
result<producer_id_block> decode_producer_id_block(std::string_view json);

}  // namespace ferry::coord::layout
