#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace ferry::config {

// A topic's leader.replication.throttled.replicas or follower.replication.throttled.replicas: the replicas
// whose replication counts against that side's throttle (replication/replication_quota.h), as
// "partition:broker" pairs or "*" for every replica. Kafka's reassignment tool writes them for a move.
struct throttled_replicas {
  bool all = false;
  std::vector<std::pair<std::int32_t, std::int32_t>> replicas;  // (partition, broker)

  [[nodiscard]] bool covers(std::int32_t partition, std::int32_t broker) const;
  // nullopt for text that is neither "*" nor a comma-separated list of "partition:broker" pairs.
  [[nodiscard]] static std::optional<throttled_replicas> parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;

  bool operator==(const throttled_replicas&) const = default;
};

// The topic-level settings Ferry honours, by Kafka's names (retention.ms, segment.bytes, ...). A topic's
// effective settings are the broker's defaults (from log.* broker settings) overlaid with the overrides
// stored for the topic in ZooKeeper (/config/topics/<topic>).
struct topic_settings {
  std::string cleanup_policy = "delete";                       // cleanup.policy
  std::string compression_type = "producer";                   // compression.type
  std::int64_t delete_retention_ms = 86400000;                 // delete.retention.ms
  std::int64_t file_delete_delay_ms = 60000;                   // file.delete.delay.ms
  std::int64_t flush_messages = INT64_MAX;                     // flush.messages
  std::int64_t flush_ms = INT64_MAX;                           // flush.ms
  std::int32_t index_interval_bytes = 4096;                    // index.interval.bytes
  std::int32_t max_message_bytes = 1048588;                    // max.message.bytes
  std::string message_timestamp_type = "CreateTime";           // message.timestamp.type
  std::int32_t min_insync_replicas = 1;                        // min.insync.replicas
  std::int64_t retention_bytes = -1;                           // retention.bytes
  std::int64_t retention_ms = 604800000;                       // retention.ms
  std::int32_t segment_bytes = 1073741824;                     // segment.bytes
  std::int32_t segment_index_bytes = 10485760;                 // segment.index.bytes
  std::int64_t segment_ms = 604800000;                         // segment.ms
  std::int64_t min_compaction_lag_ms = 0;                      // min.compaction.lag.ms
  std::int64_t max_compaction_lag_ms = INT64_MAX;              // max.compaction.lag.ms
  double min_cleanable_dirty_ratio = 0.5;                      // min.cleanable.dirty.ratio
  bool unclean_leader_election_enable = false;                 // unclean.leader.election.enable
  throttled_replicas leader_replication_throttled_replicas;    // leader.replication.throttled.replicas
  throttled_replicas follower_replication_throttled_replicas;  // follower.replication.throttled.replicas

  bool operator==(const topic_settings&) const = default;
};

// A config's value type, numbered as DescribeConfigs (v3+) reports it to clients.
enum class config_type : std::int8_t {
  unknown = 0,
  boolean = 1,
  string = 2,
  int32 = 3,
  int16 = 4,
  int64 = 5,
  float64 = 6,
  list = 7,
  class_name = 8,
  password = 9,
};

// One topic config as DescribeConfigs reports it.
struct config_entry {
  std::string name;
  std::string value;
  bool is_default = true;  // false when the topic overrides it
  bool is_sensitive = false;
  std::string broker_setting;  // the broker setting that supplies the default, e.g. "log.retention.ms"; may be empty
  std::string default_value;   // what the broker setting gives when the topic does not override it
  config_type type = config_type::unknown;
};

// Names of every topic config, sorted.
[[nodiscard]] const std::vector<std::string_view>& topic_config_names();

// The type of a topic config, and its value from the defaults alone; nullopt for a name that is not one.
[[nodiscard]] std::optional<config_type> topic_config_type(std::string_view name);
[[nodiscard]] std::optional<std::string> topic_config_default(const topic_settings& defaults, std::string_view name);

// Applies one override ("retention.ms" = "3600000") to `settings`. An unknown name or a bad value is an
// error whose message names both (the server sends it as INVALID_CONFIG).
struct config_error {
  std::string message;
};
[[nodiscard]] std::optional<config_error> apply_topic_override(topic_settings& settings, std::string_view name,
                                                               std::string_view value);

// Defaults overlaid with every override; the first bad override is reported.
[[nodiscard]] std::optional<config_error> resolve_topic_settings(const topic_settings& defaults,
                                                                 const std::map<std::string, std::string>& overrides,
                                                                 topic_settings& out);

// Every topic config with its effective value and where it came from.
[[nodiscard]] std::vector<config_entry> describe_topic_settings(const topic_settings& defaults,
                                                                const std::map<std::string, std::string>& overrides);

}  // namespace ferry::config
