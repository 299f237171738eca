#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;

// Deletes empty groups with their offsets (tombstones in __consumer_offsets); NON_EMPTY_GROUP while a group
// has members, GROUP_ID_NOT_FOUND for one that does not exist. Each group needs Delete.
awaitable<p::delete_groups_response> handle_delete_groups(request_context& ctx, p::delete_groups_request& request) {
  p::delete_groups_response response;
  auto& groups = ctx.broker.groups;
  for (const auto& id : request.groups_names) {
    if (!authorize(ctx, authz::operation::remove, authz::resource_type::group, id)) {
      response.results.push_back({id, ctx.error(p::error_code::group_authorization_failed)});
      continue;
    }
    auto reply = std::make_shared<coordinator_reply<std::error_code>>(ctx.connection.executor);
    groups.delete_group(id, reply->callback());
    while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
    response.results.push_back({id, ctx.error(to_kafka_error(reply->value()))});
  }
  co_return response;
}

}  // namespace ferry::server::handlers
