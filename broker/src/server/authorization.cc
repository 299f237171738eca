#include "server/authorization.h"

#include "base/log.h"
#include "protocol/api_table.h"

namespace ferry::server {
namespace {

const authz::acl_snapshot& acls_of(request_context& ctx) {
  if (!ctx.acls) ctx.acls = ctx.broker.cluster.view()->acls;
  return *ctx.acls;
}

authz::requester requester_of(const request_context& ctx) { return {ctx.connection.principal, ctx.connection.host}; }

std::string_view api_name(std::int16_t key) {
  for (const auto& api : protocol::all_apis)
    if (api.key == key) return api.name;
  return "?";
}

}  // namespace

bool may(request_context& ctx, authz::operation op, authz::resource_type type, std::string_view name) {
  const auto* settings = ctx.broker.authorizer;
  if (settings == nullptr) return true;
  return acls_of(ctx).authorize(requester_of(ctx), op, type, name, *settings);
}

bool authorize(request_context& ctx, authz::operation op, authz::resource_type type, std::string_view name) {
  if (may(ctx, op, type, name)) return true;
  ctx.broker.metrics.authorization()
      .denials(std::string(authz::name_of(op)), std::string(authz::name_of(type)))
      .Increment();
  FERRY_LOG_LIMITED(info, "authz", 1000) << "denied " << ctx.connection.principal << " from " << ctx.connection.host
                                         << " operation " << authz::name_of(op) << " on " << authz::name_of(type) << ":"
                                         << name << " (" << api_name(ctx.header.api_key) << ", listener "
                                         << ctx.connection.listener << ")";
  return false;
}

bool authorize_any(request_context& ctx, authz::operation op, authz::resource_type type) {
  const auto* settings = ctx.broker.authorizer;
  if (settings == nullptr) return true;
  if (acls_of(ctx).authorize_any(requester_of(ctx), op, type, *settings)) return true;
  ctx.broker.metrics.authorization()
      .denials(std::string(authz::name_of(op)), std::string(authz::name_of(type)))
      .Increment();
  FERRY_LOG_LIMITED(info, "authz", 1000) << "denied " << ctx.connection.principal << " from " << ctx.connection.host
                                         << " operation " << authz::name_of(op) << " on any " << authz::name_of(type)
                                         << " (" << api_name(ctx.header.api_key) << ")";
  return false;
}

std::int32_t cluster_operations(request_context& ctx) {
  if (!authorize_cluster(ctx, authz::operation::describe)) return 0;
  return authorized_operations(ctx, authz::resource_type::cluster, authz::cluster_name);
}

access_check deferred_may(request_context& ctx) {
  const auto* settings = ctx.broker.authorizer;
  if (settings == nullptr) return [](authz::operation, authz::resource_type, std::string_view) { return true; };
  acls_of(ctx);
  return [acls = ctx.acls, principal = ctx.connection.principal, host = ctx.connection.host, settings](
             authz::operation op, authz::resource_type type, std::string_view name) {
    return acls->authorize({principal, host}, op, type, name, *settings);
  };
}

std::int32_t authorized_operations(request_context& ctx, authz::resource_type type, std::string_view name) {
  std::uint32_t bits = 0;
  for (auto op = authz::operation::read; op <= authz::operation::describe_tokens;
       op = static_cast<authz::operation>(authz::code_of(op) + 1))
    if (authz::applies_to(type, op) && may(ctx, op, type, name))
      bits |= 1U << static_cast<unsigned>(authz::code_of(op));
  return static_cast<std::int32_t>(bits);
}

}  // namespace ferry::server
