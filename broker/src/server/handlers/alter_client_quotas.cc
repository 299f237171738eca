#include "base/log.h"
#include "server/authorization.h"
#include "server/client_quota_entities.h"
#include "server/handlers/client_quota_wire.h"
#include "server/handlers/handlers.h"
#include "server/view_wait.h"

namespace ferry::server::handlers {
namespace {

// How long a change may take to reach this broker's view before it answers anyway (the change is stored).
constexpr std::chrono::seconds quota_view_wait{10};

// Rewrites the entity's node with `changes` applied to the quota keys it holds now (a user's SCRAM credentials
// beside them are kept), read from ZooKeeper rather than the view so a change made through another broker is not
// undone.
result<void> store(entity_configs& configs, const quota::quota_alteration& alteration) {
  const auto [type, name] = config_entity_of(alteration.entity);
  FERRY_TRY(auto config, configs.read_entity_config(type, name));
  for (const auto& change : alteration.changes) {
    const std::string key(quota::name_of(change.key));
    if (change.value)
      config[key] = quota::stored_text(change.key, *change.value);
    else
      config.erase(key);
  }
  return configs.set_entity_config(type, name, config);
}

// Whether the view holds the alteration's outcome: each key set to its value, or gone.
bool in_view(const coord::cluster_view& view, const quota::quota_alteration& alteration) {
  const auto entries = client_quota_entries(view);
  const auto found = entries.find(alteration.entity);
  for (const auto& change : alteration.changes) {
    const bool has = found != entries.end() && found->second.contains(change.key);
    if (change.value ? !has || found->second.at(change.key) != *change.value : has) return false;
  }
  return true;
}

}  // namespace

// AlterClientQuotas (kafka-configs.sh --alter --entity-type users/clients, the AdminClient's alterClientQuotas):
// each entry is checked as Kafka checks it (quota/quota_entity.h: check_alteration) and written to its entity's
// node in ZooKeeper, which every broker follows; the answer waits until this broker's view has it. Needs
// AlterConfigs on the cluster. One result per entry, echoing its entity.
awaitable<p::alter_client_quotas_response> handle_alter_client_quotas(request_context& ctx,
                                                                      p::alter_client_quotas_request& request) {
  p::alter_client_quotas_response response;
  const bool allowed = authorize_cluster(ctx, authz::operation::alter_configs);
  for (auto& entry : request.entries) {
    auto& out = response.entries.emplace_back();
    std::vector<quota::entity_component> entity;
    for (const auto& e : entry.entity) {
      out.entity.push_back({e.entity_type, e.entity_name});
      entity.push_back({e.entity_type, e.entity_name});
    }
    if (!allowed) {
      out.error_code = ctx.error(p::error_code::cluster_authorization_failed);
      continue;
    }
    if (ctx.broker.quota_configs == nullptr) {
      out.error_code = ctx.error(p::error_code::unknown_server_error);
      continue;
    }
    std::vector<quota::quota_op> ops;
    for (auto& op : entry.ops) ops.push_back({std::move(op.key), op.value, op.remove});
    auto checked = quota::check_alteration(entity, ops);
    if (const auto* refused = std::get_if<quota::refusal>(&checked)) {
      out.error_code = ctx.error(code_of(*refused));
      out.error_message = refused->message;
      continue;
    }
    const auto& alteration = std::get<quota::quota_alteration>(checked);
    if (request.validate_only) continue;
    auto* configs = ctx.broker.quota_configs;
    const auto stored =
        co_await run_on_zookeeper(ctx.broker, [configs, &alteration] { return store(*configs, alteration); });
    if (!stored) {
      out.error_code = ctx.error(p::error_code::unknown_server_error);
      out.error_message = "cannot store the quotas: " + stored.error().message();
      continue;
    }
    const bool seen = co_await wait_for_view(
        ctx.broker, [&alteration](const coord::cluster_view& v) { return in_view(v, alteration); }, quota_view_wait);
    if (!seen)
      FERRY_LOG(warn, "quota") << "the quotas of " << quota::to_string(alteration.entity)
                               << " were stored but this broker's view did not show them within "
                               << quota_view_wait.count() << " s";
  }
  co_return response;
}

}  // namespace ferry::server::handlers
