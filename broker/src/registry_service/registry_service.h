#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "admin/http_server.h"
#include "config/broker_config.h"
#include "coord/cluster_view.h"
#include "registry/registry_api.h"
#include "registry/registry_state.h"
#include "registry/schema_writer.h"
#include "registry_service/registry_forwarder.h"
#include "registry_service/registry_metrics.h"
#include "registry_service/schemas_producer.h"
#include "registry_service/schemas_reader.h"
#include "server/broker_context.h"
#include "server/peer_requests.h"

namespace ferry::registry_service {

// The URL other brokers forward registry writes to (schema.registry.advertised.listener, else the inter-broker
// listener's advertised host and schema.registry.listener's port); throws config_exception naming the setting
// when there is none to give (a listener on port 0 without an advertised one).
std::string advertised_url(const config::broker_config& config);

// Creates `_schemas` when it does not exist (one partition, compacted, schema.registry.topic.replication.factor
// replicas, once that many brokers are live), and compacts it when someone made it without compaction, which
// would lose schemas to retention. Blocking on ZooKeeper.
void ensure_schemas_topic(server::broker_context& broker, const config::schema_registry_settings& settings);

// The schema registry on one broker: its own HTTP listener (schema.registry.listener), its copy of the
// registry read from `_schemas`, the writer while it leads that topic, and the forwarding of writes to the
// broker that does otherwise.
class registry_service {
 public:
  struct dependencies {
    const config::schema_registry_settings& settings;
    broker_id self;
    boost::asio::io_context& io;
    std::function<std::shared_ptr<const coord::cluster_view>()> view;
    std::shared_ptr<server::peer_requests> peers;
    const net::peer_security* peer_security = nullptr;
    admin::admin_access access;
    registry_forwarder::settings forwarding;
    prometheus::Registry& metrics;
  };
  explicit registry_service(dependencies d);
  ~registry_service();

  // Binds the listener; the message names schema.registry.listener.
  result<void> listen();
  void start();
  // On the io_context's thread.
  void stop();
  [[nodiscard]] std::uint16_t bound_port() const { return server_.bound_port(); }
  void reload_changed_files() { server_.reload_changed_files(); }
  // Brings the size gauges up to date (before /metrics is rendered).
  void refresh_metrics() { metrics_.refresh(state_); }

 private:
  class writes;  // registry::write_route: here, or forwarded

  const config::schema_registry_settings& settings_;
  std::function<std::shared_ptr<const coord::cluster_view>()> view_;
  registry::registry_state state_;
  schemas_producer producer_;
  registry::schema_writer writer_;
  registry_forwarder forwarder_;
  std::unique_ptr<writes> writes_;
  registry::registry_api api_;
  schemas_reader reader_;
  registry_metrics metrics_;
  admin::http_server server_;
};

}  // namespace ferry::registry_service
