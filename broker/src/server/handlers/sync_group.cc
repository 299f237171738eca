#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;

// The classic group protocol's sync phase: the leader's assignment is stored in __consumer_offsets before
// anyone gets theirs, so followers' requests wait for the leader's.
// Needs Read on the group.
awaitable<p::sync_group_response> handle_sync_group(request_context& ctx, p::sync_group_request& request) {
  if (!authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)) {
    p::sync_group_response refused;
    refused.error_code = ctx.error(p::error_code::group_authorization_failed);
    co_return refused;
  }
  group::sync_request sync;
  sync.member_id = request.member_id;
  sync.group_instance_id = request.group_instance_id;
  sync.generation = request.generation_id;
  sync.protocol_type = request.protocol_type;
  sync.protocol_name = request.protocol_name;
  for (auto& a : request.assignments) sync.assignments.emplace_back(a.member_id, std::move(a.assignment));

  auto& groups = ctx.broker.groups;
  const auto now = ctx.broker.clock.now_ms();
  auto reply = std::make_shared<coordinator_reply<group::sync_result>>(ctx.connection.executor);
  groups.sync(request.group_id, sync, now, reply->callback());
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  const auto& result = reply->value();

  p::sync_group_response response;
  response.error_code = ctx.error(to_kafka_error(result.error));
  response.protocol_type = result.protocol_type;
  response.protocol_name = result.protocol_name;
  response.assignment = result.assignment;
  co_return response;
}

}  // namespace ferry::server::handlers
