#include <map>

#include "server/authorization.h"
#include "server/handlers/acl_wire.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

using creation_result = p::create_acls_response::creation_result;

}  // namespace

// CreateAcls stores ACLs in ZooKeeper (coord::acl_store, Kafka's layout), one write per resource pattern, and
// answers once this broker's view has them, so the caller's next request here is decided by them. Each creation
// gets its own result: Cluster Alter is required, and a binding Kafka would not store (UNKNOWN or filter-only
// elements, an empty name, a cluster not named kafka-cluster, an operation the type does not have) is
// INVALID_REQUEST with the reason.
awaitable<p::create_acls_response> handle_create_acls(request_context& ctx, p::create_acls_request& request) {
  p::create_acls_response response;
  response.results.resize(request.creations.size());
  const auto fail_all = [&](p::error_code code, const std::optional<std::string>& message) {
    for (auto& r : response.results) r = creation_result{ctx.error(code), message};
  };
  if (ctx.broker.authorizer == nullptr || ctx.broker.acls == nullptr) {
    fail_all(p::error_code::security_disabled, std::string(no_authorizer_message));
    co_return response;
  }
  if (!authorize_cluster(ctx, authz::operation::alter)) {
    fail_all(p::error_code::cluster_authorization_failed, std::nullopt);
    co_return response;
  }

  // The valid creations by resource pattern, with the indexes of their results.
  std::map<authz::resource_pattern, std::vector<std::pair<std::size_t, authz::acl_entry>>> by_resource;
  for (std::size_t i = 0; i < request.creations.size(); ++i) {
    auto& c = request.creations[i];
    authz::acl_binding binding{{authz::resource_type_from_code(c.resource_type), std::move(c.resource_name),
                                authz::pattern_type_from_code(c.resource_pattern_type)},
                               {std::move(c.principal), std::move(c.host), authz::operation_from_code(c.operation),
                                authz::permission_from_code(c.permission_type)}};
    if (auto why = authz::invalid_reason(binding)) {
      response.results[i] = creation_result{ctx.error(p::error_code::invalid_request), std::move(*why)};
      continue;
    }
    by_resource[std::move(binding.resource)].emplace_back(i, std::move(binding.entry));
  }

  std::vector<authz::acl_binding> stored;
  for (const auto& [resource, indexed] : by_resource) {
    std::vector<authz::acl_entry> entries;
    for (const auto& [i, e] : indexed) entries.push_back(e);
    auto* acls = ctx.broker.acls;
    const auto& pattern = resource;
    const auto written =
        co_await run_on_zookeeper(ctx.broker, [acls, &pattern, &entries] { return acls->add_acls(pattern, entries); });
    for (const auto& [i, e] : indexed) {
      if (written) {
        stored.push_back({resource, e});
      } else {
        response.results[i] = creation_result{ctx.error(p::error_code::unknown_server_error),
                                              "cannot store the ACL: " + written.error().message()};
      }
    }
  }
  co_await await_acls_in_view(ctx, stored, true);
  co_return response;
}

}  // namespace ferry::server::handlers
