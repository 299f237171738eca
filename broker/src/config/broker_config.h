#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/authorizer_config.h"
#include "config/listener_security.h"
#include "config/listeners.h"
#include "config/topic_config.h"
#include "config/zookeeper_security.h"

namespace ferry::config {

// The value of replica.selector.class that turns on fetching from the closest replica, as Kafka names it.
inline constexpr std::string_view rack_aware_replica_selector =
    "org.apache.kafka.common.replica.RackAwareReplicaSelector";

// The built-in schema registry (Ferry; the topic settings mirror Confluent's kafkastore.*).
struct schema_registry_settings {
  bool enable = false;                               // schema.registry.enable
  endpoint listener{"0.0.0.0", 8081};                // schema.registry.listener: host:port
  std::optional<endpoint> advertised;                // schema.registry.advertised.listener: host:port others use
  std::string topic = "_schemas";                    // schema.registry.topic
  std::int32_t topic_replication_factor = 3;         // schema.registry.topic.replication.factor
  std::int32_t timeout_ms = 10000;                   // schema.registry.timeout.ms: a write waits this long
  std::int32_t max_request_bytes = 8 * 1024 * 1024;  // schema.registry.max.request.bytes
  std::int32_t max_schema_depth = 64;                // schema.registry.max.schema.depth
  http_security security;  // schema.registry.listener.protocol, schema.registry.ssl.*, schema.registry.authentication*
};

// The broker's settings, by Kafka's property names where Kafka has one. Read once at startup from a YAML
// mapping (key: value) plus --override key=value pairs, which win. Unknown keys and bad values stop startup
// with a message naming them (config_error).
struct broker_config {
  std::int32_t broker_id = -1;  // broker.id (required)
  // listeners, advertised.listeners, listener.security.protocol.map, inter.broker.listener.name
  listeners_config listeners;
  std::string rack;  // broker.rack
  // replica.selector.class = rack_aware_replica_selector: consumers that name their rack (client.rack) are sent
  // to an in-sync replica in it (KIP-392). Unset (Kafka's default): they read from the leader.
  bool replica_selector_rack_aware = false;
  std::vector<std::string> log_dirs{"/tmp/ferry-logs"};          // log.dirs (or log.dir)
  std::string zookeeper_connect;                                 // zookeeper.connect (required)
  std::int32_t zookeeper_session_timeout_ms = 18000;             // zookeeper.session.timeout.ms
  std::int32_t zookeeper_connection_timeout_ms = 18000;          // zookeeper.connection.timeout.ms
  zookeeper_security_settings zookeeper_security;                // zookeeper.set.acl, zookeeper.digest.*
  std::int32_t num_partitions = 1;                               // num.partitions
  std::int16_t default_replication_factor = 1;                   // default.replication.factor
  bool auto_create_topics_enable = true;                         // auto.create.topics.enable
  bool delete_topic_enable = true;                               // delete.topic.enable
  std::int64_t log_retention_check_interval_ms = 300000;         // log.retention.check.interval.ms
  std::int64_t log_flush_scheduler_interval_ms = 1000;           // log.flush.scheduler.interval.ms (Kafka: Long.MAX)
  std::int64_t log_flush_offset_checkpoint_interval_ms = 60000;  // log.flush.offset.checkpoint.interval.ms
  std::int64_t connections_max_idle_ms = 600000;                 // connections.max.idle.ms (-1: never)
  // Ferry's caps on partition counts, so one CreateTopics or CreatePartitions cannot ask for billions:
  std::int32_t max_partitions_per_topic = 10000;      // max.partitions.per.topic
  std::int32_t max_partitions = 200000;               // max.partitions: in the whole cluster
  std::int32_t socket_request_max_bytes = 104857600;  // socket.request.max.bytes
  // socket.send.buffer.bytes / socket.receive.buffer.bytes: SO_SNDBUF / SO_RCVBUF of client connections; -1
  // keeps the kernel's autotuning. Kafka's default is 102400; Ferry's is -1, which measured as fast or faster.
  std::int32_t socket_send_buffer_bytes = -1;
  std::int32_t socket_receive_buffer_bytes = -1;
  std::int32_t num_network_threads = 3;          // num.network.threads
  std::int32_t num_io_threads = 4;               // num.io.threads: threads for blocking work (ZooKeeper, fsync)
  std::int32_t replica_lag_time_max_ms = 30000;  // replica.lag.time.max.ms
  // How followers fetch from their leaders (Kafka's replica.fetch.* defaults).
  std::int32_t replica_fetch_wait_max_ms = 500;              // replica.fetch.wait.max.ms
  std::int32_t replica_fetch_min_bytes = 1;                  // replica.fetch.min.bytes
  std::int32_t replica_fetch_max_bytes = 1048576;            // replica.fetch.max.bytes: per partition
  std::int32_t replica_fetch_response_max_bytes = 10485760;  // replica.fetch.response.max.bytes
  std::int32_t replica_fetch_backoff_ms = 1000;              // replica.fetch.backoff.ms
  std::int32_t num_replica_fetchers = 1;                     // num.replica.fetchers
  std::int32_t replica_socket_timeout_ms = 30000;            // replica.socket.timeout.ms
  // Controlled shutdown on SIGTERM (Kafka's defaults).
  bool controlled_shutdown_enable = true;                    // controlled.shutdown.enable
  std::int32_t controlled_shutdown_max_retries = 3;          // controlled.shutdown.max.retries
  std::int32_t controlled_shutdown_retry_backoff_ms = 5000;  // controlled.shutdown.retry.backoff.ms
  // The controller's preferred leader elections (Kafka's defaults).
  bool auto_leader_rebalance_enable = true;                    // auto.leader.rebalance.enable
  std::int32_t leader_imbalance_check_interval_seconds = 300;  // leader.imbalance.check.interval.seconds
  std::int32_t leader_imbalance_per_broker_percentage = 10;    // leader.imbalance.per.broker.percentage
  // The log cleaner (storage/log_cleaner.h), Kafka's defaults.
  bool log_cleaner_enable = true;                           // log.cleaner.enable
  std::int32_t log_cleaner_threads = 1;                     // log.cleaner.threads
  std::int64_t log_cleaner_backoff_ms = 15000;              // log.cleaner.backoff.ms
  std::int64_t log_cleaner_dedupe_buffer_size = 134217728;  // log.cleaner.dedupe.buffer.size: all threads
  std::int32_t log_cleaner_io_buffer_size = 524288;         // log.cleaner.io.buffer.size: all threads
  // The group coordinator and __consumer_offsets (Kafka's names and defaults). Like __transaction_state, the
  // topic is created only once as many brokers are live as its replication factor (one broker: set it to 1).
  std::int32_t offsets_topic_num_partitions = 50;        // offsets.topic.num.partitions
  std::int32_t offsets_topic_replication_factor = 3;     // offsets.topic.replication.factor
  std::int32_t offsets_topic_segment_bytes = 104857600;  // offsets.topic.segment.bytes
  std::int32_t offsets_commit_timeout_ms = 5000;         // offsets.commit.timeout.ms
  std::int32_t offset_metadata_max_bytes = 4096;         // offset.metadata.max.bytes
  std::int32_t group_min_session_timeout_ms = 6000;      // group.min.session.timeout.ms
  std::int32_t group_max_session_timeout_ms = 1800000;   // group.max.session.timeout.ms
  std::int32_t group_initial_rebalance_delay_ms = 3000;  // group.initial.rebalance.delay.ms
  std::int32_t group_max_size = 2147483647;              // group.max.size
  bool group_consumer_protocol = true;  // group.coordinator.rebalance.protocols: classic and (default) consumer
  // transaction.version (Ferry; in Kafka a cluster feature set with kafka-features.sh): the level of the
  // transaction.version feature ApiVersions finalizes. 2 lets producers use KIP-890 part 2 (an epoch bump per
  // transaction, partitions added by the broker); 0 and 1 keep them on the classic flow. Set it alike on
  // every broker; clients read it when they connect. Next to the bool above, where it fills padding.
  std::int16_t transaction_version = 2;
  std::int32_t group_consumer_session_timeout_ms = 45000;                 // group.consumer.session.timeout.ms
  std::int32_t group_consumer_min_session_timeout_ms = 45000;             // group.consumer.min.session.timeout.ms
  std::int32_t group_consumer_max_session_timeout_ms = 60000;             // group.consumer.max.session.timeout.ms
  std::int32_t group_consumer_heartbeat_interval_ms = 5000;               // group.consumer.heartbeat.interval.ms
  std::int32_t group_consumer_min_heartbeat_interval_ms = 5000;           // group.consumer.min.heartbeat.interval.ms
  std::int32_t group_consumer_max_heartbeat_interval_ms = 15000;          // group.consumer.max.heartbeat.interval.ms
  std::int32_t group_consumer_max_size = 2147483647;                      // group.consumer.max.size
  std::vector<std::string> group_consumer_assignors{"uniform", "range"};  // group.consumer.assignors
  std::int64_t offsets_retention_minutes = 10080;                         // offsets.retention.minutes
  std::int64_t offsets_retention_check_interval_ms = 600000;              // offsets.retention.check.interval.ms
  // The transaction coordinator and __transaction_state (Kafka's names and defaults).
  std::int32_t transaction_state_log_num_partitions = 50;        // transaction.state.log.num.partitions
  std::int32_t transaction_state_log_replication_factor = 3;     // ...replication.factor
  std::int32_t transaction_state_log_min_isr = 2;                // transaction.state.log.min.isr
  std::int32_t transaction_state_log_segment_bytes = 104857600;  // transaction.state.log.segment.bytes
  std::int32_t transaction_max_timeout_ms = 900000;              // transaction.max.timeout.ms
  std::int32_t transactional_id_expiration_ms = 604800000;       // transactional.id.expiration.ms
  std::int32_t transaction_abort_timed_out_transaction_cleanup_interval_ms = 10000;   // transaction.abort...
  std::int32_t transaction_remove_expired_transaction_cleanup_interval_ms = 3600000;  // transaction.remove...
  std::int32_t producer_id_expiration_ms = 86400000;                                  // producer.id.expiration.ms
  std::int32_t producer_id_expiration_check_interval_ms = 600000;  // producer.id.expiration.check.interval.ms
  endpoint admin{"127.0.0.1", 9644};         // admin.listener: host:port of the HTTP admin API (Ferry)
  admin_api_security admin_security;         // admin.listener.protocol, admin.ssl.*, admin.authentication* (Ferry)
  schema_registry_settings schema_registry;  // schema.registry.* (Ferry)
  authorizer_settings authorizer;            // authorizer.class.name, super.users, allow.everyone.if.no.acl.found
  std::string log_level = "info";            // log.level: debug, info, warn, error (Ferry)
  std::string log_format = "text";           // log.format: text or json, one object per line (Ferry)
  topic_settings topic_defaults;             // log.retention.*, log.segment.bytes, message.max.bytes, ...
};

// Where a broker's settings come from, in increasing precedence. One container spec serves every broker of a
// StatefulSet this way: the shared file, a per-node file an init container writes (broker.rack), and
// environment variables the pod spec fills from its ordinal and DNS name.
struct config_sources {
  std::vector<std::string> files;        // YAML mappings; a later file wins over an earlier one
  std::vector<std::string> environment;  // "NAME=value" entries; only FERRY_CONFIG_<KEY> ones are settings
  std::vector<std::string> overrides;    // "key=value", from --override
};

// The setting an environment variable name stands for: FERRY_CONFIG_ stripped, lower-cased, "_" read as ".",
// "__" as "-" and "___" as "_" (the rule Confluent's Kafka images use), so FERRY_CONFIG_BROKER_ID is broker.id.
// Empty for a name without the prefix.
std::string setting_of_environment_name(std::string_view name);

// Reads the files and applies the environment's settings and the overrides. Throws config_exception naming the
// offending key, value, file or variable.
broker_config load_broker_config(const config_sources& sources);

// The same from already-collected key/value pairs.
broker_config parse_broker_config(const std::map<std::string, std::string>& settings);

}  // namespace ferry::config
