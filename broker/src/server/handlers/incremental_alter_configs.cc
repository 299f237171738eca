#include <algorithm>
#include <set>
#include <sstream>

#include "config/dynamic_broker_config.h"
#include "config/listener_security.h"
#include "config/topic_config.h"
#include "security/tls_context.h"
#include "server/error_mapping.h"
#include "server/handlers/config_resources.h"
#include "server/handlers/handlers.h"
#include "server/topic_admin.h"

namespace ferry::server::handlers {
namespace {

enum class operation : std::int8_t { set = 0, remove = 1, append = 2, subtract = 3 };
// Kafka's ConfigResource.Type codes.

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> items;
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// Applies one operation to `overrides`; an error code and message when the request is not acceptable.
std::optional<std::pair<p::error_code, std::string>> apply(
    const config::topic_settings& defaults, std::map<std::string, std::string>& overrides,
    const p::incremental_alter_configs_request::alter_configs_resource::alterable_config& c) {
  switch (static_cast<operation>(c.config_operation)) {
    case operation::set:
      if (!c.value) return std::pair{p::error_code::invalid_request, "SET of '" + c.name + "' needs a value"};
      overrides[c.name] = *c.value;
      return std::nullopt;
    case operation::remove:
      overrides.erase(c.name);
      return std::nullopt;
    case operation::append:
    case operation::subtract: {
      // As Kafka: only list configs take APPEND and SUBTRACT. APPEND starts from the override or else the
      // default and adds the values not there yet; SUBTRACT removes values from the override.
      const bool append = static_cast<operation>(c.config_operation) == operation::append;
      if (config::topic_config_type(c.name) != config::config_type::list)
        return std::pair{p::error_code::invalid_request, std::string(append ? "APPEND" : "SUBTRACT") +
                                                             " is not allowed for '" + c.name +
                                                             "': it is not a list config"};
      const auto current = overrides.find(c.name);
      std::vector<std::string> items;
      if (current != overrides.end())
        items = split_list(current->second);
      else if (append)
        items = split_list(config::topic_config_default(defaults, c.name).value_or(""));
      for (const auto& v : split_list(c.value.value_or(""))) {
        const auto at = std::find(items.begin(), items.end(), v);
        if (append && at == items.end()) items.push_back(v);
        if (!append && at != items.end()) items.erase(at);
      }
      overrides[c.name] = join_list(items);
      return std::nullopt;
    }
  }
  return std::pair{p::error_code::invalid_request,
                   "unknown config operation " + std::to_string(c.config_operation) + " for '" + c.name + "'"};
}

// The /config/brokers entity a BROKER resource names: this broker's id, or the empty name for every broker. As in
// Kafka, another broker's settings are changed through that broker (the admin client sends them there).
std::optional<std::string> broker_entity(const std::string& resource_name, std::int32_t self) {
  if (resource_name.empty()) return std::string(coord::layout::default_broker_entity);
  if (resource_name != std::to_string(self)) return std::nullopt;
  return resource_name;
}

// Why the TLS files a listener would take from `settings` (a broker's dynamic settings as the request leaves
// them) cannot serve it, for each listener whose files the request names; nullopt when they can. Reads files.
std::optional<std::string> refused_tls_files(
    const config::listeners_config& listeners,
    const p::incremental_alter_configs_request::alter_configs_resource& resource,
    const std::map<std::string, std::string>& settings) {
  std::set<const config::listener_config*> changed;
  for (const auto& c : resource.configs) {
    if (const auto file = config::find_listener_tls_file(c.name, listeners)) changed.insert(file->listener);
  }
  const auto dynamic = [&settings](const std::string& name) -> std::optional<std::string> {
    const auto it = settings.find(name);
    return it == settings.end() ? std::nullopt : std::optional(it->second);
  };
  for (const auto* l : changed) {
    const auto tls = config::with_dynamic_tls_files(*l, dynamic);
    if (auto context = security::make_server_context(tls, config::listener_setting_prefix(l->name)); !context)
      return std::move(context).error();
  }
  return std::nullopt;
}

// A broker resource: SET or DELETE of the dynamic broker settings (config/dynamic_broker_config.h). DELETE of a
// setting that is not set succeeds whatever its name, as in Kafka: kafka-reassign-partitions --verify clears
// replica.alter.log.dirs.io.max.bytes.per.second along with the throttles on every broker.
awaitable<void> alter_broker(request_context& ctx, const p::incremental_alter_configs_request& request,
                             const p::incremental_alter_configs_request::alter_configs_resource& resource,
                             p::incremental_alter_configs_response::alter_configs_resource_response& out) {
  const auto self = ctx.broker.config.broker_id;
  const auto entity = broker_entity(resource.resource_name, self);
  if (!entity) {
    out.error_code = ctx.error(p::error_code::invalid_request);
    out.error_message = "Unexpected broker id, expected " + std::to_string(self) + " or empty string, but received " +
                        resource.resource_name;
    co_return;
  }
  const auto current =
      co_await run_on_zookeeper(ctx.broker, [&ctx, &entity] { return ctx.broker.writes.read_broker_config(*entity); });
  if (!current) {
    out.error_code = ctx.error(to_kafka_error(current.error()));
    out.error_message = "cannot read the dynamic settings of broker '" + resource.resource_name + "'";
    co_return;
  }
  auto settings = current.value();
  const bool per_broker = *entity != coord::layout::default_broker_entity;
  for (const auto& c : resource.configs) {
    const auto op = static_cast<operation>(c.config_operation);
    std::optional<config::config_error> problem;
    if (op == operation::set)
      problem = c.value
                    ? config::check_dynamic_broker_setting(c.name, *c.value, ctx.broker.config.listeners, per_broker)
                    : config::config_error{"SET of '" + c.name + "' needs a value"};
    else if (op != operation::remove)
      problem = config::config_error{"only SET and DELETE apply to broker setting '" + c.name + "'"};
    if (problem) {
      out.error_code = ctx.error(p::error_code::invalid_config);
      out.error_message = problem->message;
      co_return;
    }
    if (op == operation::set)
      settings[c.name] = *c.value;
    else
      settings.erase(c.name);
  }
  if (auto refused = co_await run_blocking(ctx.broker, [&ctx, &resource, &settings] {
        return refused_tls_files(ctx.broker.config.listeners, resource, settings);
      })) {
    out.error_code = ctx.error(p::error_code::invalid_config);
    out.error_message = std::move(*refused);
    co_return;
  }
  if (request.validate_only || settings == current.value()) co_return;
  const auto written = co_await run_on_zookeeper(
      ctx.broker, [&ctx, &entity, &settings] { return ctx.broker.writes.set_broker_config(*entity, settings); });
  if (!written) {
    out.error_code = ctx.error(to_kafka_error(written.error()));
    out.error_message = "cannot write the dynamic settings of broker '" + resource.resource_name + "'";
  }
}

}  // namespace

// IncrementalAlterConfigs sets or deletes single overrides and keeps the rest; APPEND and SUBTRACT add values
// to or remove them from list configs (cleanup.policy). The result is validated as a whole, as AlterConfigs is.
// Broker resources change the dynamic broker settings: the replication throttles and the TLS listeners' files.
// AlterConfigs is required on the topic, or on the cluster for a broker.
awaitable<p::incremental_alter_configs_response> handle_incremental_alter_configs(
    request_context& ctx, p::incremental_alter_configs_request& request) {
  p::incremental_alter_configs_response response;
  for (const auto& resource : request.resources) {
    auto& out = response.responses.emplace_back();
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    if (resource.resource_type != topic_resource && resource.resource_type != broker_resource) {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "only topic and broker configs can be changed";
      continue;
    }
    if (const auto refused =
            config_refusal(ctx, resource.resource_type, resource.resource_name, authz::operation::alter_configs)) {
      out.error_code = ctx.error(*refused);
      continue;
    }
    std::set<std::string> names;
    bool repeated = false;
    for (const auto& c : resource.configs) repeated = repeated || !names.insert(c.name).second;
    if (repeated) {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "a config appears more than once for the resource";
      continue;
    }
    if (resource.resource_type == broker_resource) {
      co_await alter_broker(ctx, request, resource, out);
      continue;
    }
    // The current overrides come from ZooKeeper, not the view: a change made through another broker may not
    // have reached this one's view yet, and writing back a stale map would undo it.
    const auto current = co_await run_on_zookeeper(
        ctx.broker, [&ctx, &resource] { return ctx.broker.writes.read_topic_config(resource.resource_name); });
    if (!current) {
      out.error_code = ctx.error(to_kafka_error(current.error()));
      out.error_message = "topic '" + resource.resource_name + "' does not exist";
      continue;
    }
    auto overrides = current.value();
    std::optional<std::pair<p::error_code, std::string>> problem;
    for (const auto& c : resource.configs)
      if (!problem) problem = apply(ctx.broker.config.topic_defaults, overrides, c);
    if (problem) {
      out.error_code = ctx.error(problem->first);
      out.error_message = problem->second;
      continue;
    }
    const bool validate_only = request.validate_only;
    const auto result = co_await run_on_zookeeper(ctx.broker, [&ctx, &resource, &overrides, validate_only] {
      return set_topic_overrides(ctx.broker, resource.resource_name, overrides, validate_only);
    });
    out.error_code = ctx.error(result.error);
    out.error_message = result.message;
  }
  co_return response;
}

}  // namespace ferry::server::handlers
