#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// An error naming the setting and the value when `name` is not a dynamic setting or `value` is not valid for it.
[[nodiscard]] std::optional<config_error> check_dynamic_broker_setting(std::string_view name, std::string_view value);

// A replication throttle's bytes per second from its dynamic setting's value; nullopt (no limit) when the
// setting is not set, is its default, or does not parse (the writer checked it, so only a hand-written znode).
[[nodiscard]] std::optional<std::int64_t> replication_throttle_rate(const std::optional<std::string>& value);

}  // namespace ferry::config
