#include "config/dynamic_broker_config.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace ferry::config {
namespace {

constexpr std::string_view unlimited = "9223372036854775807";  // Kafka's default: Long.MAX_VALUE

std::optional<std::int64_t> parse_rate(std::string_view text) {
  std::int64_t parsed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc{} || end != text.data() + text.size() || parsed < 0) return std::nullopt;
  return parsed;
}

}  // namespace

const std::vector<dynamic_broker_setting>& dynamic_broker_settings() {
  static const std::vector<dynamic_broker_setting> all{
      {follower_replication_throttled_rate, unlimited, config_type::int64},
      {leader_replication_throttled_rate, unlimited, config_type::int64},
  };
  return all;
}

std::optional<config_error> check_dynamic_broker_setting(std::string_view name, std::string_view value) {
  const auto& all = dynamic_broker_settings();
  if (std::none_of(all.begin(), all.end(), [&](const auto& s) { return s.name == name; }))
    return config_error{
        "broker setting '" + std::string(name) + "' cannot change while the broker runs; the dynamic ones are " +
        std::string(leader_replication_throttled_rate) + " and " + std::string(follower_replication_throttled_rate)};
  if (!parse_rate(value))
    return config_error{"invalid value '" + std::string(value) + "' for broker setting '" + std::string(name) +
                        "': must be a number of bytes per second, at least 0"};
  return std::nullopt;
}

std::optional<std::int64_t> replication_throttle_rate(const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  const auto rate = parse_rate(*value);
  if (!rate || *rate == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  return rate;
}

}  // namespace ferry::config
