#include "server/handlers/config_resources.h"
#include "server/handlers/handlers.h"
#include "server/topic_admin.h"

namespace ferry::server::handlers {

// AlterConfigs replaces a topic's whole set of overrides (settings left out return to their defaults). It needs
// AlterConfigs on the topic.
awaitable<p::alter_configs_response> handle_alter_configs(request_context& ctx, p::alter_configs_request& request) {
  p::alter_configs_response response;
  for (const auto& resource : request.resources) {
    auto& out = response.responses.emplace_back();
    out.resource_type = resource.resource_type;
    out.resource_name = resource.resource_name;
    if (resource.resource_type != topic_resource) {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "only topic configs can be changed; broker settings need a restart";
      continue;
    }
    if (const auto refused =
            config_refusal(ctx, resource.resource_type, resource.resource_name, authz::operation::alter_configs)) {
      out.error_code = ctx.error(*refused);
      continue;
    }
    std::map<std::string, std::string> overrides;
    for (const auto& c : resource.configs)
      if (c.value) overrides[c.name] = *c.value;
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
