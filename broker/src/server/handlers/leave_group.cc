#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Members leave one at a time (v0-2) or in batches (v3+, KIP-345: static members by group.instance.id). Needs
// Read on the group.
awaitable<p::leave_group_response> handle_leave_group(request_context& ctx, p::leave_group_request& request) {
  if (!authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)) {
    p::leave_group_response refused;
    refused.error_code = ctx.error(p::error_code::group_authorization_failed);
    co_return refused;
  }
  std::vector<group::group_coordinator::leaving_member> leaving;
  if (ctx.version() >= 3) {
    for (const auto& m : request.members) leaving.push_back({m.member_id, m.group_instance_id});
  } else {
    leaving.push_back({request.member_id, std::nullopt});
  }
  p::leave_group_response response;
  const auto left = ctx.broker.groups.leave(request.group_id, leaving, ctx.broker.clock.now_ms());
  if (!left) {
    response.error_code = ctx.error(to_kafka_error(left.error()));
    co_return response;
  }
  if (ctx.version() < 3) {
    response.error_code = ctx.error(to_kafka_error(left.value().front()));
    co_return response;
  }
  for (std::size_t i = 0; i < leaving.size(); ++i)
    response.members.push_back(
        {leaving[i].member_id, leaving[i].group_instance_id, ctx.error(to_kafka_error(left.value()[i]))});
  co_return response;
}

}  // namespace ferry::server::handlers
