#include "config/dynamic_broker_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <utility>

#include "config/listener_security.h"

namespace ferry::config {
namespace {

constexpr std::string_view unlimited = "9223372036854775807";  // Kafka's default: Long.MAX_VALUE
constexpr std::string_view keystore_location = "ssl.keystore.location";
constexpr std::string_view truststore_location = "ssl.truststore.location";
// Secrets and inline keys, which Kafka keeps in ZooKeeper encrypted with password.encoder.secret.
constexpr std::array<std::string_view, 6> sensitive_tls_settings{
    "ssl.keystore.password",          "ssl.key.password",           "ssl.truststore.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.truststore.certificates"};

// "ssl.<x>" of "listener.name.<l>.ssl.<x>" or of "ssl.<x>"; nullopt for other names.
std::optional<std::string_view> tls_setting(std::string_view name) {
  const auto bare = without_listener_prefix(name);
  if (!bare.starts_with("ssl.")) return std::nullopt;
  return bare;
}

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

std::string listener_tls_file_setting(const listener_config& l, bool truststore) {
  return listener_setting_prefix(l.name) + std::string(truststore ? truststore_location : keystore_location);
}

std::optional<listener_tls_file> find_listener_tls_file(std::string_view name, const listeners_config& listeners) {
  for (const auto& l : listeners.listeners) {
    if (!uses_tls(l.protocol)) continue;
    for (const bool truststore : {false, true})
      if (name == listener_tls_file_setting(l, truststore)) return listener_tls_file{&l, truststore};
  }
  return std::nullopt;
}

tls_settings with_dynamic_tls_files(const listener_config& l,
                                    const std::function<std::optional<std::string>(const std::string&)>& dynamic) {
  auto tls = l.tls;
  if (auto keystore = dynamic(listener_tls_file_setting(l, false))) {
    tls.keystore_location = std::move(*keystore);
    tls.keystore_certificate_chain.clear();
    tls.keystore_key.clear();
  }
  if (auto truststore = dynamic(listener_tls_file_setting(l, true))) {
    tls.truststore_location = std::move(*truststore);
    tls.truststore_certificates.clear();
  }
  return tls;
}

std::optional<config_error> check_dynamic_broker_setting(std::string_view name, std::string_view value,
                                                         const listeners_config& listeners, bool per_broker) {
  const std::string quoted = "'" + std::string(name) + "'";
  if (find_listener_tls_file(name, listeners)) {
    if (!per_broker)
      return config_error{quoted +
                          " can only be set for one broker (kafka-configs --entity-name <id>), as in Kafka: "
                          "each broker has its own certificate"};
    if (value.empty()) return config_error{quoted + " needs the path of a PEM file"};
    return std::nullopt;
  }
  if (const auto tls = tls_setting(name)) {
    if (std::find(sensitive_tls_settings.begin(), sensitive_tls_settings.end(), *tls) != sensitive_tls_settings.end())
      return config_error{quoted +
                          " would be kept in ZooKeeper in the clear (Ferry has no password.encoder.secret): "
                          "put the key in the PEM file that listener.name.<listener>." +
                          std::string(keystore_location) + " names"};
    return config_error{"broker setting " + quoted +
                        " cannot change while the broker runs; of the TLS settings "
                        "only listener.name.<listener>." +
                        std::string(keystore_location) + " and listener.name.<listener>." +
                        std::string(truststore_location) + " can, for a listener with TLS"};
  }
  const auto& all = dynamic_broker_settings();
  if (std::none_of(all.begin(), all.end(), [&](const auto& s) { return s.name == name; }))
    return config_error{"broker setting " + quoted + " cannot change while the broker runs; the dynamic ones are " +
                        std::string(leader_replication_throttled_rate) + ", " +
                        std::string(follower_replication_throttled_rate) + " and listener.name.<listener>." +
                        std::string(keystore_location) + " and ." + std::string(truststore_location) +
                        " of a listener with TLS"};
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
