#include "registry_service/registry_service.h"

#include "base/log.h"
#include "config/listeners.h"
#include "registry/write_planner.h"
#include "server/internal_topics.h"

namespace ferry::registry_service {
namespace asio = boost::asio;

namespace {

schema::parse_limits limits_of(const config::schema_registry_settings& s) {
  return {.max_depth = static_cast<std::size_t>(s.max_schema_depth)};
}

admin::http_reply as_http(registry::registry_reply reply) {
  return {reply.status, std::string(registry::content_type), std::move(reply.body)};
}

asio::awaitable<admin::http_reply> answer(registry::registry_api* api, registry_metrics* metrics,
                                          admin::http_request request) {
  const auto target = registry::parse_target(request.target);
  const bool write = target && registry::is_write(request.method, *target);
  // A named argument: GCC 12 mishandles a braced temporary passed to a coroutine (it is freed twice).
  registry::registry_request forwarded_request{std::move(request.method), std::move(request.target),
                                               std::move(request.body), std::move(request.principal),
                                               request.forwarded};
  auto reply = co_await api->handle(std::move(forwarded_request));
  metrics->count(write ? "write" : "read", reply.status);
  co_return as_http(std::move(reply));
}

admin::http_server_options server_options(const config::schema_registry_settings& s) {
  return {.name = "schema registry",
          .max_body_bytes = static_cast<std::uint64_t>(s.max_request_bytes),
          .error_reply = [](int status, const std::string& message) {
            return as_http(registry::error_reply(status, message));
          }};
}

}  // namespace

std::string advertised_url(const config::broker_config& config) {
  const auto& s = config.schema_registry;
  const std::string scheme = s.security.https ? "https://" : "http://";
  if (s.advertised) return scheme + s.advertised->host + ":" + std::to_string(s.advertised->port);
  const auto& inter_broker = config.listeners.inter_broker_listener();
  const std::string host = inter_broker.advertised ? inter_broker.advertised->host : std::string();
  if (host.empty() || s.listener.port == 0)
    throw config::config_exception(
        "'schema.registry.advertised.listener' is needed: other brokers forward registry writes to it, and "
        "neither the inter-broker listener's advertised host nor a fixed 'schema.registry.listener' port gives it");
  return scheme + host + ":" + std::to_string(s.listener.port);
}

void ensure_schemas_topic(server::broker_context& broker, const config::schema_registry_settings& settings) {
  const server::internal_topic spec{.name = settings.topic,
                                    .owner = "registry",
                                    .partitions_setting = "(one partition)",
                                    .replication_setting = "schema.registry.topic.replication.factor",
                                    .partitions = 1,
                                    .replication_factor = settings.topic_replication_factor,
                                    .min_insync_replicas = 2,
                                    .segment_bytes = 104857600,
                                    .compression = "producer"};
  const auto view = broker.cluster.view();
  const auto* topic = view->find_topic(settings.topic);
  if (topic == nullptr) {
    (void)server::create_internal_topic(broker, spec);
    return;
  }
  if (server::internal_topic_needs_repair(spec, *view))
    if (const auto repaired = server::repair_internal_topic(broker, spec); !repaired)
      FERRY_LOG_LIMITED(warn, "registry", 60000)
          << "cannot compact " << settings.topic << ": " << repaired.error().message();
}

class registry_service::writes final : public registry::write_route {
 public:
  writes(registry_service& service, broker_id self) : service_(service), self_(self) {}

  asio::awaitable<registry::registry_reply> write(registry::registry_request request,
                                                  registry::request_target target) override {
    const auto view = service_.view_();
    const auto* partition = view->find_partition({service_.settings_.topic, partition_id{0}});
    if (partition == nullptr)
      co_return registry::error_reply(registry::error_codes::unknown_leader,
                                      "the schemas topic " + service_.settings_.topic + " does not exist yet");
    if (!partition->state || partition->state->leader == no_broker)
      co_return registry::error_reply(registry::error_codes::unknown_leader, "the schemas topic has no leader");
    const auto leader = partition->state->leader;
    if (leader == self_)
      co_return co_await service_.writer_.write(std::move(request), std::move(target), partition->state->epoch.value());
    if (request.forwarded)
      co_return registry::error_reply(registry::error_codes::unknown_leader,
                                      "this broker no longer leads the schemas topic; try again");
    const auto it = view->brokers.find(leader);
    if (it == view->brokers.end() || !it->second.schema_registry)
      co_return registry::error_reply(
          registry::error_codes::unknown_leader,
          "broker " + std::to_string(leader.value()) + ", which leads the schemas topic, serves no schema registry");
    const auto url = *it->second.schema_registry;
    auto reply = co_await service_.forwarder_.forward(url, request);
    service_.metrics_.count("forwarded", reply.status);
    co_return reply;
  }

 private:
  registry_service& service_;
  broker_id self_;
};

registry_service::registry_service(dependencies d)
    : settings_(d.settings),
      view_(d.view),
      producer_(d.peers, d.view, d.settings.topic, std::chrono::milliseconds(d.settings.timeout_ms)),
      writer_(d.io.get_executor(), state_, producer_, limits_of(d.settings),
              std::chrono::milliseconds(d.settings.timeout_ms)),
      forwarder_(std::move(d.forwarding)),
      writes_(std::make_unique<writes>(*this, d.self)),
      api_(state_, *writes_, limits_of(d.settings)),
      reader_(d.io, state_, d.view, {.topic = d.settings.topic, .self = d.self, .security = d.peer_security}),
      metrics_(d.metrics),
      server_(
          d.io,
          [api = &api_, metrics = &metrics_](admin::http_request r) { return answer(api, metrics, std::move(r)); },
          std::move(d.access), server_options(d.settings)) {}

registry_service::~registry_service() = default;

result<void> registry_service::listen() { return server_.listen(settings_.listener.host, settings_.listener.port); }

void registry_service::start() {
  reader_.start();
  server_.start();
}

void registry_service::stop() {
  server_.stop();
  reader_.stop();
}

}  // namespace ferry::registry_service
