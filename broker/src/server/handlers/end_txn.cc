#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// KIP-588: PRODUCER_FENCED from EndTxn v2.
constexpr std::int16_t first_version_with_producer_fenced = 2;

}  // namespace

// EndTxn: answered once the coordinator has written PrepareCommit or PrepareAbort; the markers follow.
awaitable<p::end_txn_response> handle_end_txn(request_context& ctx, p::end_txn_request& request) {
  p::end_txn_response response;
  auto reply = std::make_shared<coordinator_reply<std::error_code>>(ctx.connection.executor);
  ctx.broker.transactions.end_txn(request.transactional_id, {request.producer_id, request.producer_epoch},
                                  request.committed, ctx.broker.clock.now_ms(), reply->callback());
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  if (reply->value())
    response.error_code =
        ctx.error(to_kafka_txn_error(reply->value(), ctx.version() >= first_version_with_producer_fenced));
  co_return response;
}

}  // namespace ferry::server::handlers
