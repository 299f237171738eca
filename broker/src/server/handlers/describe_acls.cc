#include <map>

#include "server/authorization.h"
#include "server/handlers/acl_wire.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// DescribeAcls lists the ACLs a filter selects, as this broker's view has them, grouped by resource pattern (Kafka's
// AclApis.handleDescribeAcls): Cluster Describe is required, a filter with UNKNOWN elements is INVALID_REQUEST, and
// a broker without an authorizer answers SECURITY_DISABLED.
awaitable<p::describe_acls_response> handle_describe_acls(request_context& ctx, p::describe_acls_request& request) {
  p::describe_acls_response response;
  if (ctx.broker.authorizer == nullptr) {
    response.error_code = ctx.error(p::error_code::security_disabled);
    response.error_message = std::string(no_authorizer_message);
    co_return response;
  }
  if (!authorize_cluster(ctx, authz::operation::describe)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  const auto filter = filter_from_wire(request);
  if (!filter) {
    response.error_code = ctx.error(p::error_code::invalid_request);
    response.error_message = "The filter contained UNKNOWN elements";
    co_return response;
  }
  std::map<authz::resource_pattern, std::vector<authz::acl_entry>> by_resource;
  for (auto& b : ctx.broker.cluster.view()->acls->select(*filter))
    by_resource[std::move(b.resource)].push_back(std::move(b.entry));
  for (auto& [resource, entries] : by_resource) {
    auto& out = response.resources.emplace_back();
    out.resource_type = authz::code_of(resource.type);
    out.resource_name = resource.name;
    out.pattern_type = authz::code_of(resource.pattern);
    for (auto& e : entries)
      out.acls.push_back({std::move(e.principal), std::move(e.host), authz::code_of(e.op), authz::code_of(e.perm)});
  }
  co_return response;
}

}  // namespace ferry::server::handlers
