#include <algorithm>

#include "config/dynamic_broker_config.h"
#include "config/topic_config.h"
#include "server/handlers/config_resources.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

using resource_result = p::describe_configs_response::describe_configs_result;
using config_result = resource_result::describe_configs_resource_result;

// DescribeConfigs config sources.
constexpr std::int8_t source_topic = 1;
constexpr std::int8_t source_dynamic_broker = 2;
constexpr std::int8_t source_dynamic_default_broker = 3;
constexpr std::int8_t source_static_broker = 4;
constexpr std::int8_t source_default = 5;

bool wanted(const std::optional<std::vector<std::string>>& keys, const std::string& name) {
  return !keys || keys->empty() || std::find(keys->begin(), keys->end(), name) != keys->end();
}

void describe_topic(request_context& ctx, const p::describe_configs_request& request,
                    const p::describe_configs_request::describe_configs_resource& resource, resource_result& out) {
  const auto view = ctx.broker.cluster.view();
  const auto* topic = view->find_topic(resource.resource_name);
  if (topic == nullptr) {
    out.error_code = ctx.error(p::error_code::unknown_topic_or_partition);
    out.error_message = "topic '" + resource.resource_name + "' does not exist";
    return;
  }
  for (const auto& entry : config::describe_topic_settings(ctx.broker.config.topic_defaults, topic->config)) {
    if (!wanted(resource.configuration_keys, entry.name)) continue;
    auto& c = out.configs.emplace_back();
    c.name = entry.name;
    c.value = entry.value;
    c.is_default = entry.is_default;
    c.config_source = entry.is_default ? source_default : source_topic;
    c.config_type = static_cast<std::int8_t>(entry.type);
    // Synonyms in precedence order, as Kafka lists them: the topic's override, then the broker setting that
    // supplies the default, with its value.
    if (request.include_synonyms) {
      if (!entry.is_default) c.synonyms.push_back({entry.name, entry.value, source_topic});
      if (!entry.broker_setting.empty())
        c.synonyms.push_back({entry.broker_setting, entry.default_value, source_default});
    }
  }
}

void describe_broker(request_context& ctx, const p::describe_configs_request::describe_configs_resource& resource,
                     resource_result& out) {
  const auto& config = ctx.broker.config;
  if (resource.resource_name != std::to_string(config.broker_id) && !resource.resource_name.empty()) {
    out.error_code = ctx.error(p::error_code::invalid_request);
    out.error_message = "this is broker " + std::to_string(config.broker_id);
    return;
  }
  std::string dirs;
  for (const auto& d : config.log_dirs) dirs += (dirs.empty() ? "" : ",") + d;
  const std::vector<std::pair<std::string, std::string>> settings{
      {"broker.id", std::to_string(config.broker_id)},
      {"broker.rack", config.rack},
      {"log.dirs", dirs},
      {"zookeeper.connect", config.zookeeper_connect},
      {"num.partitions", std::to_string(config.num_partitions)},
      {"default.replication.factor", std::to_string(config.default_replication_factor)},
      {"auto.create.topics.enable", config.auto_create_topics_enable ? "true" : "false"},
      {"delete.topic.enable", config.delete_topic_enable ? "true" : "false"},
      {"socket.request.max.bytes", std::to_string(config.socket_request_max_bytes)},
      {"message.max.bytes", std::to_string(config.topic_defaults.max_message_bytes)},
      {"log.retention.ms", std::to_string(config.topic_defaults.retention_ms)},
      {"log.retention.bytes", std::to_string(config.topic_defaults.retention_bytes)},
      {"log.segment.bytes", std::to_string(config.topic_defaults.segment_bytes)},
  };
  for (const auto& [name, value] : settings) {
    if (!wanted(resource.configuration_keys, name)) continue;
    auto& c = out.configs.emplace_back();
    c.name = name;
    c.value = value;
    c.read_only = true;  // these change only with a restart
    c.config_source = source_static_broker;
  }
  // The dynamic settings: this broker's own value, else the one for every broker, else the default. The
  // resource with an empty name is the one for every broker.
  const auto view = ctx.broker.cluster.view();
  const auto broker = resource.resource_name.empty() ? std::nullopt : std::optional(broker_id{config.broker_id});
  for (const auto& setting : config::dynamic_broker_settings()) {
    const std::string name(setting.name);
    if (!wanted(resource.configuration_keys, name)) continue;
    auto& c = out.configs.emplace_back();
    c.name = name;
    c.config_type = static_cast<std::int8_t>(setting.type);
    const auto dynamic = view->dynamic_broker_setting(broker, name);
    c.value = dynamic ? dynamic->value : std::string(setting.default_value);
    c.is_default = !dynamic;
    c.config_source = !dynamic ? source_default : dynamic->own ? source_dynamic_broker : source_dynamic_default_broker;
  }
  // The TLS listeners' files: per broker only, so the resource for every broker has none.
  if (!broker) return;
  for (const auto& l : config.listeners.listeners) {
    if (!config::uses_tls(l.protocol)) continue;
    for (const bool truststore : {false, true}) {
      const auto name = config::listener_tls_file_setting(l, truststore);
      if (!wanted(resource.configuration_keys, name)) continue;
      const auto dynamic = view->dynamic_broker_setting(broker, name);
      const auto& file = truststore ? l.tls.truststore_location : l.tls.keystore_location;
      if (!dynamic && file.empty()) continue;  // inline PEM or none: nothing to show
      auto& c = out.configs.emplace_back();
      c.name = name;
      c.config_type = static_cast<std::int8_t>(config::config_type::string);
      c.value = dynamic ? dynamic->value : file;
      c.config_source = dynamic ? source_dynamic_broker : source_static_broker;
    }
  }
}

}  // namespace

// Topic configs: every topic setting with its effective value, marked default or topic override. Broker
// configs: the main static settings, read-only, and the dynamic ones with where their value comes from.
// DescribeConfigs is required on the topic, or on the cluster for a broker.
awaitable<p::describe_configs_response> handle_describe_configs(request_context& ctx,
                                                                p::describe_configs_request& request) {
  p::describe_configs_response response;
  for (const auto& resource : request.resources) {
    auto& out = response.results.emplace_back();
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    if (resource.resource_type == topic_resource || resource.resource_type == broker_resource) {
      if (const auto refused =
              config_refusal(ctx, resource.resource_type, resource.resource_name, authz::operation::describe_configs)) {
        out.error_code = ctx.error(*refused);
        continue;
      }
    }
    if (resource.resource_type == topic_resource)
      describe_topic(ctx, request, resource, out);
    else if (resource.resource_type == broker_resource)
      describe_broker(ctx, resource, out);
    else {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "only topic and broker configs can be described";
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
