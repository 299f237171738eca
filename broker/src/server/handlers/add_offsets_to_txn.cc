#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "group/group_coordinator.h"
#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// KIP-588: PRODUCER_FENCED from AddOffsetsToTxn v2.
constexpr std::int16_t first_version_with_producer_fenced = 2;

}  // namespace

// AddOffsetsToTxn: the group's __consumer_offsets partition joins the transaction, so that the offsets the
// producer then commits with TxnOffsetCommit get the transaction's marker. Needs Write on the transactional id
// and Read on the group.
awaitable<p::add_offsets_to_txn_response> handle_add_offsets_to_txn(request_context& ctx,
                                                                    p::add_offsets_to_txn_request& request) {
  p::add_offsets_to_txn_response response;
  if (!authorize(ctx, authz::operation::write, authz::resource_type::transactional_id, request.transactional_id)) {
    response.error_code = ctx.error(p::error_code::transactional_id_authorization_failed);
    co_return response;
  }
  if (!authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)) {
    response.error_code = ctx.error(p::error_code::group_authorization_failed);
    co_return response;
  }
  if (request.group_id.empty()) {
    response.error_code = ctx.error(p::error_code::invalid_group_id);
    co_return response;
  }
  const topic_partition offsets{std::string(group::offsets_topic),
                                partition_id{ctx.broker.groups.partition_for(request.group_id)}};
  auto reply = std::make_shared<coordinator_reply<std::error_code>>(ctx.connection.executor);
  ctx.broker.transactions.add_partitions(request.transactional_id, {request.producer_id, request.producer_epoch},
                                         {offsets}, /*by_broker=*/false, ctx.broker.clock.now_ms(), reply->callback());
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  if (reply->value())
    response.error_code =
        ctx.error(to_kafka_txn_error(reply->value(), ctx.version() >= first_version_with_producer_fenced));
  co_return response;
}

}  // namespace ferry::server::handlers
