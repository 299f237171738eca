#include "server/authorization.h"
#include "server/client_quota_entities.h"
#include "server/handlers/client_quota_wire.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// DescribeClientQuotas (kafka-configs.sh --describe --entity-type users/clients, the AdminClient's
// describeClientQuotas): the entities a filter selects with their quotas, as this broker's view has them. Needs
// DescribeConfigs on the cluster; a filter Kafka refuses is INVALID_REQUEST (UNSUPPORTED_VERSION for an entity
// type it does not know), with Kafka's message.
awaitable<p::describe_client_quotas_response> handle_describe_client_quotas(
    request_context& ctx, p::describe_client_quotas_request& request) {
  p::describe_client_quotas_response response;
  if (!authorize_cluster(ctx, authz::operation::describe_configs)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  std::vector<quota::filter_component> components;
  for (auto& c : request.components)
    components.push_back({std::move(c.entity_type), static_cast<quota::match_type>(c.match_type), std::move(c.match)});
  auto checked = quota::check_filter(components, request.strict);
  if (const auto* refused = std::get_if<quota::refusal>(&checked)) {
    response.error_code = ctx.error(code_of(*refused));
    response.error_message = refused->message;
    co_return response;
  }
  const quota::quota_table table(client_quota_entries(*ctx.broker.cluster.view()));
  auto& entries = response.entries.emplace();
  for (const auto& [entity, values] : table.select(std::get<quota::quota_filter>(checked))) {
    auto& out = entries.emplace_back();
    out.entity = entity_to_wire<p::describe_client_quotas_response::entry_data::entity_data>(entity);
    for (const auto& [key, value] : values) out.values.push_back({std::string(quota::name_of(key)), value});
  }
  co_return response;
}

}  // namespace ferry::server::handlers
