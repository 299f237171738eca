#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;

// The classic group protocol's join phase (group/classic_group.h): the answer waits until the rebalance
// completes, so a request may stay parked for up to the group's rebalance timeout.
// Needs Read on the group.
awaitable<p::join_group_response> handle_join_group(request_context& ctx, p::join_group_request& request) {
  if (!authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)) {
    p::join_group_response refused;
    refused.error_code = ctx.error(p::error_code::group_authorization_failed);
    if (ctx.version() < 7) refused.protocol_name = "";  // not nullable before v7
    co_return refused;
  }
  group::join_request join;
  join.member_id = request.member_id;
  join.group_instance_id = request.group_instance_id;
  join.client_id = ctx.header.client_id.value_or("");
  join.client_host = client_host(ctx.connection.peer);
  join.session_timeout_ms = request.session_timeout_ms;
  // v0 has no rebalance timeout: the session timeout serves as both.
  join.rebalance_timeout_ms = ctx.version() >= 1 ? request.rebalance_timeout_ms : request.session_timeout_ms;
  join.protocol_type = request.protocol_type;
  for (auto& protocol : request.protocols) join.protocols.push_back({protocol.name, std::move(protocol.metadata)});
  join.require_known_member_id = ctx.version() >= 4;
  join.supports_skip_assignment = ctx.version() >= 9;

  auto& groups = ctx.broker.groups;
  const auto now = ctx.broker.clock.now_ms();
  auto reply = std::make_shared<coordinator_reply<group::join_result>>(ctx.connection.executor);
  groups.join(request.group_id, join, now, reply->callback());
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  const auto& result = reply->value();

  p::join_group_response response;
  response.error_code = ctx.error(to_kafka_error(result.error));
  response.member_id = result.member_id;
  if (!result.error) {
    response.generation_id = result.generation;
    response.protocol_type = result.protocol_type;
    response.protocol_name = result.protocol_name;
    response.leader = result.leader;
    response.skip_assignment = result.skip_assignment;
    for (const auto& m : result.members) response.members.push_back({m.member_id, m.group_instance_id, m.metadata});
  }
  if (!response.protocol_name && ctx.version() < 7) response.protocol_name = "";  // not nullable before v7
  co_return response;
}

}  // namespace ferry::server::handlers
