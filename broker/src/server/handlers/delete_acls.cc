#include <map>

#include "server/authorization.h"
#include "server/handlers/acl_wire.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

using filter_result = p::delete_acls_response::filter_result;

p::delete_acls_response::filter_result::matching_acl matching(const authz::resource_pattern& r,
                                                              const authz::acl_entry& e) {
  p::delete_acls_response::filter_result::matching_acl out;
  out.resource_type = authz::code_of(r.type);
  out.resource_name = r.name;
  out.pattern_type = authz::code_of(r.pattern);
  out.principal = e.principal;
  out.host = e.host;
  out.operation = authz::code_of(e.op);
  out.permission_type = authz::code_of(e.perm);
  return out;
}

}  // namespace

// DeleteAcls removes, for each filter, the ACLs it selects (Kafka's AclAuthorizer.deleteAcls): the resource patterns
// that hold a match in this broker's view are rewritten in ZooKeeper, each removing what the filter selects in the
// node as it is then, and the answer lists what was removed once this broker's view no longer has it. Cluster Alter
// is required; a filter with UNKNOWN elements is INVALID_REQUEST.
awaitable<p::delete_acls_response> handle_delete_acls(request_context& ctx, p::delete_acls_request& request) {
  p::delete_acls_response response;
  response.filter_results.resize(request.filters.size());
  const auto fail_all = [&](p::error_code code, const std::optional<std::string>& message) {
    for (auto& r : response.filter_results) r = filter_result{ctx.error(code), message, {}};
  };
  if (ctx.broker.authorizer == nullptr || ctx.broker.acls == nullptr) {
    fail_all(p::error_code::security_disabled, std::string(no_authorizer_message));
    co_return response;
  }
  if (!authorize_cluster(ctx, authz::operation::alter)) {
    fail_all(p::error_code::cluster_authorization_failed, std::nullopt);
    co_return response;
  }

  const auto view = ctx.broker.cluster.view();
  std::vector<authz::acl_binding> removed_all;
  for (std::size_t i = 0; i < request.filters.size(); ++i) {
    auto& out = response.filter_results[i];
    const auto filter = filter_from_wire(request.filters[i]);
    if (!filter) {
      out = filter_result{ctx.error(p::error_code::invalid_request), "The filter contained UNKNOWN elements", {}};
      continue;
    }
    std::set<authz::resource_pattern> resources;
    for (auto& b : view->acls->select(*filter)) resources.insert(std::move(b.resource));
    for (const auto& resource : resources) {
      auto* acls = ctx.broker.acls;
      const auto& pattern = resource;
      const auto& selects = *filter;
      const auto removed = co_await run_on_zookeeper(ctx.broker, [acls, &pattern, &selects] {
        return acls->remove_acls(pattern, [&](const authz::acl_entry& e) { return selects.matches({pattern, e}); });
      });
      if (!removed) {
        out.error_code = ctx.error(p::error_code::unknown_server_error);
        out.error_message = "cannot remove the ACLs of " + std::string(authz::name_of(resource.type)) + ":" +
                            resource.name + ": " + removed.error().message();
        continue;
      }
      for (const auto& e : removed.value()) {
        out.matching_acls.push_back(matching(resource, e));
        removed_all.push_back({resource, e});
      }
    }
  }
  co_await await_acls_in_view(ctx, removed_all, false);
  co_return response;
}

}  // namespace ferry::server::handlers
