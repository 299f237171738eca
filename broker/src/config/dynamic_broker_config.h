#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/listeners.h"
#include "config/topic_config.h"

namespace ferry::config {

// The broker settings that change while the brokers run: set with IncrementalAlterConfigs on a BROKER resource
// (kafka-configs --entity-type brokers, kafka-reassign-partitions --throttle) for one broker or for all, and
// kept in ZooKeeper (/config/brokers/<id> and /config/brokers/<default>, docs/zookeeper-layout.md). Every
// other broker setting needs a restart.
inline constexpr std::string_view leader_replication_throttled_rate = "leader.replication.throttled.rate";
inline constexpr std::string_view follower_replication_throttled_rate = "follower.replication.throttled.rate";

struct dynamic_broker_setting {
  std::string_view name;
  std::string_view default_value;
  config_type type;
};
[[nodiscard]] const std::vector<dynamic_broker_setting>& dynamic_broker_settings();

// A TLS listener's files, which change per broker while it runs, as Kafka's per-broker dynamic listener settings:
// listener.name.<l>.ssl.keystore.location and listener.name.<l>.ssl.truststore.location. The broker checks the
// files before it keeps the setting, and every new connection of the listener gets them (security/tls_context_source).
struct listener_tls_file {
  const listener_config* listener = nullptr;
  bool truststore = false;  // ssl.truststore.location; ssl.keystore.location otherwise
};
[[nodiscard]] std::optional<listener_tls_file> find_listener_tls_file(std::string_view name,
                                                                      const listeners_config& listeners);
[[nodiscard]] std::string listener_tls_file_setting(const listener_config& l, bool truststore);
// `l`'s TLS settings with the files its dynamic settings name (looked up with `dynamic`) in place of its own.
[[nodiscard]] tls_settings with_dynamic_tls_files(
    const listener_config& l, const std::function<std::optional<std::string>(const std::string&)>& dynamic);

// An error naming the setting and the value when `name` is not a dynamic setting or `value` is not valid for it.
// `per_broker`: set for one broker (a listener's TLS files can only be, as in Kafka), not the cluster-wide default.
[[nodiscard]] std::optional<config_error> check_dynamic_broker_setting(std::string_view name, std::string_view value,
                                                                       const listeners_config& listeners,
                                                                       bool per_broker);

// A replication throttle's bytes per second from its dynamic setting's value; nullopt (no limit) when the
// setting is not set, is its default, or does not parse (the writer checked it, so only a hand-written znode).
[[nodiscard]] std::optional<std::int64_t> replication_throttle_rate(const std::optional<std::string>& value);

}  // namespace ferry::config
