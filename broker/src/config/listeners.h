#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ferry::config {

// A setting that cannot be used; the message names it.
class config_exception : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct endpoint {
  std::string host;  // empty: all interfaces (for a listener)
  std::uint16_t port = 0;
};

// One Kafka listener: its name, where it accepts connections, and the address brokers and clients are told to
// use. A broker answers Metadata and FindCoordinator with every broker's address on the listener the request
// came in on, so clients inside and outside a network each get addresses they can reach.
struct listener_config {
  std::string name;                    // upper case: PLAINTEXT, INTERNAL, EXTERNAL, ...
  endpoint bind;                       // listeners
  std::optional<endpoint> advertised;  // advertised.listeners; none: registered nowhere, as in Kafka
};

struct listeners_config {
  std::vector<listener_config> listeners{{"PLAINTEXT", {"", 9092}, std::nullopt}};
  std::string inter_broker = "PLAINTEXT";  // inter.broker.listener.name: always an advertised listener

  // The listener other brokers (replication, the operator) reach this one through.
  [[nodiscard]] const listener_config& inter_broker_listener() const;
};

// Whether `key` is one of the settings parse_listeners reads.
bool is_listener_setting(const std::string& key);

// Reads listeners, advertised.listeners, listener.security.protocol.map and inter.broker.listener.name with
// Kafka's defaults and rules: unique names, every advertised listener also a listener, the inter-broker
// listener advertised. An advertised listener without a host (or 0.0.0.0) advertises this machine's name.
// Only the PLAINTEXT security protocol is served. Throws config_exception naming the setting.
listeners_config parse_listeners(const std::map<std::string, std::string>& settings);

}  // namespace ferry::config
