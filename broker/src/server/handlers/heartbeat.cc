#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin. Needs Read on the group.
awaitable<p::heartbeat_response> handle_heartbeat(request_context& ctx, p::heartbeat_request& request) {
  p::heartbeat_response response;
  if (!authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)) {
    response.error_code = ctx.error(p::error_code::group_authorization_failed);
    co_return response;
  }
  response.error_code = ctx.error(
      to_kafka_error(ctx.broker.groups.heartbeat(request.group_id, request.member_id, request.group_instance_id,
                                                 request.generation_id, ctx.broker.clock.now_ms())));
  co_return response;
}

}  // namespace ferry::server::handlers
