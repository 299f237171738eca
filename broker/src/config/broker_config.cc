#include "config/broker_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <set>
#include <sstream>

#include "config/listener_security.h"
#include "config/setting_text.h"

namespace ferry::config {
namespace {

using setting_text::fail;
using setting_text::to_bool;
using setting_text::to_int;

// A socket buffer size: -1 (the kernel's autotuning), or bytes.
std::int32_t to_buffer_size(const std::string& key, const std::string& value) {
  const auto bytes = to_int<std::int32_t>(key, value, -1, INT32_MAX);
  if (bytes == 0) fail(key, value, "must be -1 (the operating system's default) or a size in bytes");
  return bytes;
}

// "host:port" (admin.listener).
endpoint to_endpoint(const std::string& key, const std::string& value) {
  const auto colon = value.rfind(':');
  if (colon == std::string::npos) fail(key, value, "expected host:port");
  endpoint e;
  e.host = value.substr(0, colon);
  if (e.host.size() >= 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  e.port = to_int<std::uint16_t>(key, value.substr(colon + 1), 0, 65535);
  return e;
}

using setter = std::function<void(broker_config&, const std::string& key, const std::string& value)>;

// Broker settings that only supply a topic config's default, keyed by broker setting name.
void set_topic_default(broker_config& c, const std::string& topic_key, const std::string& key,
                       const std::string& value) {
  if (auto error = apply_topic_override(c.topic_defaults, topic_key, value))
    throw config_exception("invalid value '" + value + "' for '" + key + "': " + error->message);
}

const std::map<std::string, setter>& setters() {
  static const std::map<std::string, setter> all = [] {
    std::map<std::string, setter> s{
        {"broker.id", [](auto& c, auto& k, auto& v) { c.broker_id = to_int<std::int32_t>(k, v, 0, INT32_MAX); }},
        {"broker.rack", [](auto& c, auto&, auto& v) { c.rack = v; }},
        {"replica.selector.class",
         [](auto& c, auto& k, auto& v) {
           if (v != rack_aware_replica_selector && !v.empty())
             fail(k, v, "the one replica selector is " + std::string(rack_aware_replica_selector));
           c.replica_selector_rack_aware = v == rack_aware_replica_selector;
         }},
        {"log.dirs",
         [](auto& c, auto& k, auto& v) {
           c.log_dirs = setting_text::items(v);
           if (c.log_dirs.empty()) fail(k, v, "needs at least one directory");
         }},
        {"log.dir", [](auto& c, auto&, auto& v) { c.log_dirs = {v}; }},
        {"zookeeper.connect", [](auto& c, auto&, auto& v) { c.zookeeper_connect = v; }},
        {"zookeeper.session.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.zookeeper_session_timeout_ms = to_int<std::int32_t>(k, v, 1000, 3600000); }},
        {"zookeeper.connection.timeout.ms",
         [](auto& c, auto& k, auto& v) {
           c.zookeeper_connection_timeout_ms = to_int<std::int32_t>(k, v, 100, 3600000);
         }},
        {"num.partitions", [](auto& c, auto& k, auto& v) { c.num_partitions = to_int<std::int32_t>(k, v, 1, 100000); }},
        {"default.replication.factor",
         [](auto& c, auto& k, auto& v) { c.default_replication_factor = to_int<std::int16_t>(k, v, 1, 1000); }},
        {"auto.create.topics.enable", [](auto& c, auto& k, auto& v) { c.auto_create_topics_enable = to_bool(k, v); }},
        {"delete.topic.enable", [](auto& c, auto& k, auto& v) { c.delete_topic_enable = to_bool(k, v); }},
        {"log.retention.check.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.log_retention_check_interval_ms = to_int<std::int64_t>(k, v, 1, INT64_MAX);
         }},
        {"log.flush.scheduler.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.log_flush_scheduler_interval_ms = to_int<std::int64_t>(k, v, 1, INT64_MAX);
         }},
        {"log.flush.offset.checkpoint.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.log_flush_offset_checkpoint_interval_ms = to_int<std::int64_t>(k, v, 1, INT32_MAX);
         }},
        {"connections.max.idle.ms",
         [](auto& c, auto& k, auto& v) {
           c.connections_max_idle_ms = to_int<std::int64_t>(k, v, -1, INT64_MAX);
           if (c.connections_max_idle_ms == 0) throw config_exception("connections.max.idle.ms must be -1 or positive");
         }},
        {"max.partitions.per.topic",
         [](auto& c, auto& k, auto& v) { c.max_partitions_per_topic = to_int<std::int32_t>(k, v, 1, 1000000); }},
        {"max.partitions",
         [](auto& c, auto& k, auto& v) { c.max_partitions = to_int<std::int32_t>(k, v, 1, 10000000); }},
        {"socket.request.max.bytes",
         [](auto& c, auto& k, auto& v) { c.socket_request_max_bytes = to_int<std::int32_t>(k, v, 1024, INT32_MAX); }},
        {"socket.send.buffer.bytes",
         [](auto& c, auto& k, auto& v) { c.socket_send_buffer_bytes = to_buffer_size(k, v); }},
        {"socket.receive.buffer.bytes",
         [](auto& c, auto& k, auto& v) { c.socket_receive_buffer_bytes = to_buffer_size(k, v); }},
        {"num.network.threads",
         [](auto& c, auto& k, auto& v) { c.num_network_threads = to_int<std::int32_t>(k, v, 1, 256); }},
        {"num.io.threads", [](auto& c, auto& k, auto& v) { c.num_io_threads = to_int<std::int32_t>(k, v, 1, 256); }},
        {"replica.lag.time.max.ms",
         [](auto& c, auto& k, auto& v) { c.replica_lag_time_max_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"replica.fetch.wait.max.ms",
         [](auto& c, auto& k, auto& v) { c.replica_fetch_wait_max_ms = to_int<std::int32_t>(k, v, 0, INT32_MAX); }},
        {"replica.fetch.min.bytes",
         [](auto& c, auto& k, auto& v) { c.replica_fetch_min_bytes = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"replica.fetch.max.bytes",
         [](auto& c, auto& k, auto& v) { c.replica_fetch_max_bytes = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"replica.fetch.response.max.bytes",
         [](auto& c, auto& k, auto& v) {
           c.replica_fetch_response_max_bytes = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"num.replica.fetchers",
         [](auto& c, auto& k, auto& v) { c.num_replica_fetchers = to_int<std::int32_t>(k, v, 1, 64); }},
        {"replica.fetch.backoff.ms",
         [](auto& c, auto& k, auto& v) { c.replica_fetch_backoff_ms = to_int<std::int32_t>(k, v, 0, INT32_MAX); }},
        {"replica.socket.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.replica_socket_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"controlled.shutdown.enable", [](auto& c, auto& k, auto& v) { c.controlled_shutdown_enable = to_bool(k, v); }},
        {"controlled.shutdown.max.retries",
         [](auto& c, auto& k, auto& v) { c.controlled_shutdown_max_retries = to_int<std::int32_t>(k, v, 1, 1000); }},
        {"controlled.shutdown.retry.backoff.ms",
         [](auto& c, auto& k, auto& v) {
           c.controlled_shutdown_retry_backoff_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"auto.leader.rebalance.enable",
         [](auto& c, auto& k, auto& v) { c.auto_leader_rebalance_enable = to_bool(k, v); }},
        {"leader.imbalance.check.interval.seconds",
         [](auto& c, auto& k, auto& v) {
           c.leader_imbalance_check_interval_seconds = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"leader.imbalance.per.broker.percentage",
         [](auto& c, auto& k, auto& v) {
           c.leader_imbalance_per_broker_percentage = to_int<std::int32_t>(k, v, 0, 100);
         }},
        {"log.cleaner.enable", [](auto& c, auto& k, auto& v) { c.log_cleaner_enable = to_bool(k, v); }},
        {"log.cleaner.threads",
         [](auto& c, auto& k, auto& v) { c.log_cleaner_threads = to_int<std::int32_t>(k, v, 1, 64); }},
        {"log.cleaner.backoff.ms",
         [](auto& c, auto& k, auto& v) { c.log_cleaner_backoff_ms = to_int<std::int64_t>(k, v, 1, INT32_MAX); }},
        // At least 1 MiB, so that every cleaner thread's map holds some thousands of keys.
        {"log.cleaner.dedupe.buffer.size",
         [](auto& c, auto& k, auto& v) {
           c.log_cleaner_dedupe_buffer_size = to_int<std::int64_t>(k, v, 1048576, INT64_MAX);
         }},
        {"log.cleaner.io.buffer.size",
         [](auto& c, auto& k, auto& v) { c.log_cleaner_io_buffer_size = to_int<std::int32_t>(k, v, 4096, INT32_MAX); }},
        {"offsets.topic.num.partitions",
         [](auto& c, auto& k, auto& v) { c.offsets_topic_num_partitions = to_int<std::int32_t>(k, v, 1, 10000); }},
        {"offsets.topic.replication.factor",
         [](auto& c, auto& k, auto& v) { c.offsets_topic_replication_factor = to_int<std::int32_t>(k, v, 1, 32767); }},
        {"offsets.topic.segment.bytes",
         [](auto& c, auto& k, auto& v) { c.offsets_topic_segment_bytes = to_int<std::int32_t>(k, v, 14, INT32_MAX); }},
        {"offsets.commit.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.offsets_commit_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"transaction.state.log.num.partitions",
         [](auto& c, auto& k, auto& v) {
           c.transaction_state_log_num_partitions = to_int<std::int32_t>(k, v, 1, 10000);
         }},
        {"transaction.state.log.replication.factor",
         [](auto& c, auto& k, auto& v) {
           c.transaction_state_log_replication_factor = to_int<std::int32_t>(k, v, 1, 32767);
         }},
        {"transaction.state.log.min.isr",
         [](auto& c, auto& k, auto& v) { c.transaction_state_log_min_isr = to_int<std::int32_t>(k, v, 1, 32767); }},
        {"transaction.state.log.segment.bytes",
         [](auto& c, auto& k, auto& v) {
           c.transaction_state_log_segment_bytes = to_int<std::int32_t>(k, v, 14, INT32_MAX);
         }},
        {"transaction.max.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.transaction_max_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"producer.id.expiration.ms",
         [](auto& c, auto& k, auto& v) { c.producer_id_expiration_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"producer.id.expiration.check.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.producer_id_expiration_check_interval_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"transactional.id.expiration.ms",
         [](auto& c, auto& k, auto& v) {
           c.transactional_id_expiration_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"transaction.abort.timed.out.transaction.cleanup.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.transaction_abort_timed_out_transaction_cleanup_interval_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"transaction.remove.expired.transaction.cleanup.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.transaction_remove_expired_transaction_cleanup_interval_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"transaction.version",
         [](auto& c, auto& k, auto& v) { c.transaction_version = to_int<std::int16_t>(k, v, 0, 2); }},
        {"offsets.retention.minutes",
         [](auto& c, auto& k, auto& v) {
           c.offsets_retention_minutes = to_int<std::int64_t>(k, v, 1, INT64_MAX / 60000);
         }},
        {"offsets.retention.check.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.offsets_retention_check_interval_ms = to_int<std::int64_t>(k, v, 1, INT64_MAX);
         }},
        {"offset.metadata.max.bytes",
         [](auto& c, auto& k, auto& v) { c.offset_metadata_max_bytes = to_int<std::int32_t>(k, v, 0, 32767); }},
        {"group.min.session.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.group_min_session_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"group.max.session.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.group_max_session_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"group.initial.rebalance.delay.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_initial_rebalance_delay_ms = to_int<std::int32_t>(k, v, 0, INT32_MAX);
         }},
        {"group.max.size",
         [](auto& c, auto& k, auto& v) { c.group_max_size = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"group.coordinator.rebalance.protocols",
         [](auto& c, auto& k, auto& v) {
           const auto protocols = setting_text::items(v);
           c.group_consumer_protocol = false;
           bool classic = false;
           for (const auto& p : protocols) {
             if (p == "classic") {
               classic = true;
             } else if (p == "consumer") {
               c.group_consumer_protocol = true;
             } else {
               fail(k, v, "'" + p + "' is not supported (Ferry has the classic and consumer protocols)");
             }
           }
           if (!classic) fail(k, v, "must include classic");
         }},
        {"group.consumer.session.timeout.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_session_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"group.consumer.min.session.timeout.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_min_session_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"group.consumer.max.session.timeout.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_max_session_timeout_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"group.consumer.heartbeat.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_heartbeat_interval_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"group.consumer.min.heartbeat.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_min_heartbeat_interval_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"group.consumer.max.heartbeat.interval.ms",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_max_heartbeat_interval_ms = to_int<std::int32_t>(k, v, 1, INT32_MAX);
         }},
        {"group.consumer.max.size",
         [](auto& c, auto& k, auto& v) { c.group_consumer_max_size = to_int<std::int32_t>(k, v, 1, INT32_MAX); }},
        {"group.consumer.assignors",
         [](auto& c, auto& k, auto& v) {
           c.group_consumer_assignors.clear();
           for (const auto& name : setting_text::items(v)) {
             // Kafka takes the assignors' class names too.
             if (name == "uniform" || name == "org.apache.kafka.coordinator.group.assignor.UniformAssignor")
               c.group_consumer_assignors.emplace_back("uniform");
             else if (name == "range" || name == "org.apache.kafka.coordinator.group.assignor.RangeAssignor")
               c.group_consumer_assignors.emplace_back("range");
             else
               fail(k, v, "'" + name + "' is not an assignor Ferry has (uniform, range)");
           }
           if (c.group_consumer_assignors.empty()) fail(k, v, "must name at least one assignor");
         }},
        {"group.consumer.migration.policy",
         [](auto& c, auto& k, auto& v) {
           // Kafka's default, bidirectional, converts groups with members between the protocols; Ferry converts
           // only empty groups, which is what Kafka does with this policy disabled.
           std::string lower = v;
           std::ranges::transform(lower, lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
           if (lower != "disabled") fail(k, v, "only 'disabled' is supported: Ferry converts only empty groups");
         }},
        {"admin.listener", [](auto& c, auto& k, auto& v) { c.admin = to_endpoint(k, v); }},
        {"schema.registry.enable", [](auto& c, auto& k, auto& v) { c.schema_registry.enable = to_bool(k, v); }},
        {"schema.registry.listener", [](auto& c, auto& k, auto& v) { c.schema_registry.listener = to_endpoint(k, v); }},
        {"schema.registry.advertised.listener",
         [](auto& c, auto& k, auto& v) { c.schema_registry.advertised = to_endpoint(k, v); }},
        {"schema.registry.topic",
         [](auto& c, auto& k, auto& v) {
           if (v.empty() || v.size() > 249) fail(k, v, "must be a topic name");
           c.schema_registry.topic = v;
         }},
        {"schema.registry.topic.replication.factor",
         [](auto& c, auto& k, auto& v) { c.schema_registry.topic_replication_factor = to_int<std::int32_t>(k, v, 1, 32767); }},
        {"schema.registry.timeout.ms",
         [](auto& c, auto& k, auto& v) { c.schema_registry.timeout_ms = to_int<std::int32_t>(k, v, 100, 600000); }},
        {"schema.registry.max.request.bytes",
         [](auto& c, auto& k, auto& v) {
           c.schema_registry.max_request_bytes = to_int<std::int32_t>(k, v, 1024, 256 * 1024 * 1024);
         }},
        {"schema.registry.max.schema.depth",
         [](auto& c, auto& k, auto& v) { c.schema_registry.max_schema_depth = to_int<std::int32_t>(k, v, 1, 1000); }},
        {"log.level",
         [](auto& c, auto& k, auto& v) {
           if (v != "debug" && v != "info" && v != "warn" && v != "error")
             fail(k, v, "must be debug, info, warn or error");
           c.log_level = v;
         }},
        {"log.format",
         [](auto& c, auto& k, auto& v) {
           if (v != "text" && v != "json") fail(k, v, "must be text or json");
           c.log_format = v;
         }},
    };
    // Broker-level names of topic defaults (Kafka's), mapped to the topic config they set.
    const std::vector<std::pair<std::string, std::string>> topic_defaults{
        {"log.cleanup.policy", "cleanup.policy"},
        {"compression.type", "compression.type"},
        {"log.cleaner.delete.retention.ms", "delete.retention.ms"},
        {"log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio"},
        {"log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms"},
        {"log.cleaner.max.compaction.lag.ms", "max.compaction.lag.ms"},
        {"log.segment.delete.delay.ms", "file.delete.delay.ms"},
        {"log.flush.interval.messages", "flush.messages"},
        {"log.flush.interval.ms", "flush.ms"},
        {"log.index.interval.bytes", "index.interval.bytes"},
        {"message.max.bytes", "max.message.bytes"},
        {"log.message.timestamp.type", "message.timestamp.type"},
        {"min.insync.replicas", "min.insync.replicas"},
        {"log.retention.bytes", "retention.bytes"},
        {"log.retention.ms", "retention.ms"},
        {"log.segment.bytes", "segment.bytes"},
        {"log.index.size.max.bytes", "segment.index.bytes"},
        {"log.roll.ms", "segment.ms"},
        {"unclean.leader.election.enable", "unclean.leader.election.enable"},
    };
    for (const auto& entry : topic_defaults) {
      const auto& topic_key = entry.second;
      s[entry.first] = [topic_key](auto& c, auto& k, auto& v) { set_topic_default(c, topic_key, k, v); };
    }
    // Coarser units Kafka also accepts; the finer one wins when both are set (applied in that order below).
    s["log.retention.hours"] = [](auto& c, auto& k, auto& v) {
      c.topic_defaults.retention_ms = to_int<std::int64_t>(k, v, -1, INT64_MAX / 3600000) * 3600000;
      if (c.topic_defaults.retention_ms < 0) c.topic_defaults.retention_ms = -1;
    };
    s["log.retention.minutes"] = [](auto& c, auto& k, auto& v) {
      c.topic_defaults.retention_ms = to_int<std::int64_t>(k, v, -1, INT64_MAX / 60000) * 60000;
      if (c.topic_defaults.retention_ms < 0) c.topic_defaults.retention_ms = -1;
    };
    s["log.roll.hours"] = [](auto& c, auto& k, auto& v) {
      c.topic_defaults.segment_ms = to_int<std::int64_t>(k, v, 1, INT64_MAX / 3600000) * 3600000;
    };
    return s;
  }();
  return all;
}

// Kafka applies hours, then minutes, then milliseconds, whatever order the file lists them in.
constexpr std::string_view schema_registry_prefix = "schema.registry.";

// The HTTP listeners' security settings (admin.*, schema.registry.*), read apart from the setters.
bool is_http_setting(const std::string& key) {
  return is_admin_security_setting(key) || is_http_security_setting(key, schema_registry_prefix);
}

int precedence(const std::string& key) {
  if (key == "log.retention.hours" || key == "log.roll.hours") return 0;
  if (key == "log.retention.minutes") return 1;
  return 2;
}

}  // namespace

broker_config parse_broker_config(const std::map<std::string, std::string>& settings) {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : settings)
    if (!setters().contains(key) && !is_listener_setting(key) && !is_http_setting(key) && !is_authorizer_setting(key) &&
        !is_zookeeper_security_setting(key))
      unknown.push_back(key);
  if (!unknown.empty()) {
    std::string names;
    for (const auto& k : unknown) names += (names.empty() ? "" : ", ") + k;
    throw config_exception("unknown setting(s): " + names);
  }
  broker_config c;
  for (int pass = 0; pass < 3; ++pass)
    for (const auto& [key, value] : settings)
      if (precedence(key) == pass && !is_listener_setting(key) && !is_http_setting(key) &&
          !is_authorizer_setting(key) && !is_zookeeper_security_setting(key))
        setters().at(key)(c, key, value);

  if (c.broker_id < 0) throw config_exception("'broker.id' is required");
  // Kafka's own checks: a follower waiting on its leader longer than the lag limit would drop out of the ISR
  // while idle, and a socket timeout below the wait would cut every idle fetch.
  if (c.replica_fetch_wait_max_ms >= c.replica_lag_time_max_ms)
    throw config_exception("'replica.fetch.wait.max.ms' (" + std::to_string(c.replica_fetch_wait_max_ms) +
                           ") must be less than 'replica.lag.time.max.ms' (" +
                           std::to_string(c.replica_lag_time_max_ms) + ")");
  if (c.replica_socket_timeout_ms < c.replica_fetch_wait_max_ms)
    throw config_exception("'replica.socket.timeout.ms' (" + std::to_string(c.replica_socket_timeout_ms) +
                           ") must be at least 'replica.fetch.wait.max.ms' (" +
                           std::to_string(c.replica_fetch_wait_max_ms) + ")");
  if (c.group_min_session_timeout_ms > c.group_max_session_timeout_ms)
    throw config_exception("'group.min.session.timeout.ms' (" + std::to_string(c.group_min_session_timeout_ms) +
                           ") must not exceed 'group.max.session.timeout.ms' (" +
                           std::to_string(c.group_max_session_timeout_ms) + ")");
  const auto within = [](const char* name, std::int32_t value, const char* min_name, std::int32_t min,
                         const char* max_name, std::int32_t max) {
    if (value < min || value > max)
      throw config_exception(std::string("'") + name + "' (" + std::to_string(value) + ") must lie between '" +
                             min_name + "' (" + std::to_string(min) + ") and '" + max_name + "' (" +
                             std::to_string(max) + ")");
  };
  within("group.consumer.session.timeout.ms", c.group_consumer_session_timeout_ms,
         "group.consumer.min.session.timeout.ms", c.group_consumer_min_session_timeout_ms,
         "group.consumer.max.session.timeout.ms", c.group_consumer_max_session_timeout_ms);
  within("group.consumer.heartbeat.interval.ms", c.group_consumer_heartbeat_interval_ms,
         "group.consumer.min.heartbeat.interval.ms", c.group_consumer_min_heartbeat_interval_ms,
         "group.consumer.max.heartbeat.interval.ms", c.group_consumer_max_heartbeat_interval_ms);
  if (c.group_consumer_heartbeat_interval_ms >= c.group_consumer_session_timeout_ms)
    throw config_exception("'group.consumer.heartbeat.interval.ms' (" +
                           std::to_string(c.group_consumer_heartbeat_interval_ms) +
                           ") must be less than 'group.consumer.session.timeout.ms' (" +
                           std::to_string(c.group_consumer_session_timeout_ms) + ")");
  if (c.zookeeper_connect.empty()) throw config_exception("'zookeeper.connect' is required");
  c.listeners = parse_listeners(settings);
  c.admin_security = read_admin_security(settings);
  c.schema_registry.security = read_http_security(settings, schema_registry_prefix, "the schema registry");
  c.authorizer = read_authorizer_settings(settings);
  c.zookeeper_security = read_zookeeper_security(settings);
  return c;
}

namespace {

void read_yaml_file(const std::string& path, std::map<std::string, std::string>& settings) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw config_exception("cannot read config file '" + path + "': " + e.what());
  }
  if (!root || root.IsNull()) return;
  if (!root.IsMap()) throw config_exception("config file '" + path + "' must be a mapping of key: value");
  for (const auto& item : root) {
    const auto key = item.first.as<std::string>();
    if (!item.second.IsScalar())
      throw config_exception(
          std::string("setting '").append(key).append("' in '").append(path).append("' must be a single value"));
    settings[key] = item.second.as<std::string>();
  }
}

constexpr std::string_view environment_prefix = "FERRY_CONFIG_";

}  // namespace

std::string setting_of_environment_name(std::string_view name) {
  if (!name.starts_with(environment_prefix)) return {};
  name.remove_prefix(environment_prefix.size());
  std::string key;
  for (std::size_t i = 0; i < name.size();) {
    if (name[i] != '_') {
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
      ++i;
      continue;
    }
    std::size_t run = 0;
    while (i + run < name.size() && name[i + run] == '_' && run < 3) ++run;
    key += run == 1 ? '.' : run == 2 ? '-' : '_';
    i += run;
  }
  return key;
}

broker_config load_broker_config(const config_sources& sources) {
  std::map<std::string, std::string> settings;
  for (const auto& path : sources.files) read_yaml_file(path, settings);
  for (const auto& entry : sources.environment) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const auto name = std::string_view(entry).substr(0, eq);
    const auto key = setting_of_environment_name(name);
    if (key.empty()) continue;
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-_") != std::string::npos || key.front() == '.')
      throw config_exception("environment variable '" + std::string(name) + "' does not name a setting");
    settings[key] = entry.substr(eq + 1);
  }
  for (const auto& o : sources.overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) throw config_exception("--override expects key=value, got '" + o + "'");
    settings[o.substr(0, eq)] = o.substr(eq + 1);
  }
  return parse_broker_config(settings);
}

}  // namespace ferry::config
