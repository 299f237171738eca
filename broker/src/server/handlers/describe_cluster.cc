#include "server/authorization.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

constexpr std::int8_t brokers_endpoint = 1;
constexpr std::int8_t controllers_endpoint = 2;

}  // namespace

// DescribeCluster (the admin client's describeCluster): the cluster id, the controller and each live broker's
// address on the listener the request came in on. A broker has no controller endpoints (KRaft's), so asking for
// those is MISMATCHED_ENDPOINT_TYPE, and any other type UNSUPPORTED_ENDPOINT_TYPE. KIP-430's operations on the
// cluster, when asked for, need Describe on it (0 without).
awaitable<p::describe_cluster_response> handle_describe_cluster(request_context& ctx,
                                                                p::describe_cluster_request& request) {
  p::describe_cluster_response response;
  response.endpoint_type = request.endpoint_type;
  if (request.endpoint_type != brokers_endpoint) {
    const bool controllers = request.endpoint_type == controllers_endpoint;
    response.error_code =
        ctx.error(controllers ? p::error_code::mismatched_endpoint_type : p::error_code::unsupported_endpoint_type);
    response.error_message = controllers ? "This endpoint does not appear to be a controller."
                                         : "Unsupported endpoint type " + std::to_string(request.endpoint_type);
    co_return response;
  }
  const auto view = ctx.broker.cluster.view();
  response.cluster_id = view->cluster_id;
  response.controller_id = view->controller;
  for (const auto& [id, b] : view->brokers)
    if (const auto* address = b.endpoint_of(ctx.connection.listener))
      response.brokers.push_back({id, address->host, address->port, b.rack});
  if (request.include_cluster_authorized_operations) response.cluster_authorized_operations = cluster_operations(ctx);
  co_return response;
}

}  // namespace ferry::server::handlers
