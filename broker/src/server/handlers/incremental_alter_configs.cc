#include "server/handlers/handlers.h"
#include "server/topic_admin.h"

namespace ferry::server::handlers {
namespace {

enum class operation : std::int8_t { set = 0, remove = 1, append = 2, subtract = 3 };

}  // namespace

// IncrementalAlterConfigs sets or deletes single overrides and keeps the rest. APPEND and SUBTRACT apply to
// list-valued configs, and no topic config Ferry honours is a list yet.
awaitable<p::incremental_alter_configs_response> handle_incremental_alter_configs(
    request_context& ctx, p::incremental_alter_configs_request& request) {
  p::incremental_alter_configs_response response;
  for (const auto& resource : request.resources) {
    auto& out = response.responses.emplace_back();
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    if (resource.resource_type != 2) {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "only topic configs can be changed; broker settings need a restart";
      continue;
    }
    const auto* topic = ctx.broker.cluster.view()->find_topic(resource.resource_name);
    if (topic == nullptr) {
      out.error_code = ctx.error(p::error_code::unknown_topic_or_partition);
      continue;
    }
    auto overrides = topic->config;
    std::optional<std::string> problem;
    for (const auto& c : resource.configs) {
      switch (static_cast<operation>(c.config_operation)) {
        case operation::set:
          if (c.value) overrides[c.name] = *c.value;
          else problem = "SET of '" + c.name + "' needs a value";
          break;
        case operation::remove: overrides.erase(c.name); break;
        default: problem = "'" + c.name + "' is not a list config, so APPEND and SUBTRACT do not apply";
      }
    }
    if (problem) {
      out.error_code = ctx.error(p::error_code::invalid_config);
      out.error_message = problem;
      continue;
    }
    const bool validate_only = request.validate_only;
    const auto result = co_await run_blocking(ctx.broker, [&ctx, &resource, &overrides, validate_only] {
      return set_topic_overrides(ctx.broker, resource.resource_name, overrides, validate_only);
    });
    out.error_code = ctx.error(result.error);
    out.error_message = result.message;
  }
  co_return response;
}

}  // namespace ferry::server::handlers
