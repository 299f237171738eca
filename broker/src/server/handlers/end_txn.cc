#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// KIP-588: PRODUCER_FENCED from EndTxn v2.
constexpr std::int16_t first_version_with_producer_fenced = 2;
// KIP-890 part 2: from v5 every commit or abort bumps the producer's epoch, and the answer carries it.
constexpr std::int16_t first_version_bumping_epoch = 5;

}  // namespace

// EndTxn: answered once the coordinator has written PrepareCommit or PrepareAbort; the markers follow. Needs Write
// on the transactional id.
awaitable<p::end_txn_response> handle_end_txn(request_context& ctx, p::end_txn_request& request) {
  p::end_txn_response response;
  if (!authorize(ctx, authz::operation::write, authz::resource_type::transactional_id, request.transactional_id)) {
    response.error_code = ctx.error(p::error_code::transactional_id_authorization_failed);
    co_return response;
  }
  auto reply = std::make_shared<coordinator_reply<result<txn::producer_identity>>>(ctx.connection.executor);
  ctx.broker.transactions.end_txn(request.transactional_id, {request.producer_id, request.producer_epoch},
                                  request.committed, ctx.version() >= first_version_bumping_epoch,
                                  ctx.broker.clock.now_ms(), reply->callback());
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  const auto& ended = reply->value();
  if (!ended) {
    response.error_code =
        ctx.error(to_kafka_txn_error(ended.error(), ctx.version() >= first_version_with_producer_fenced));
    co_return response;
  }
  response.producer_id = ended.value().id;
  response.producer_epoch = ended.value().epoch;
  co_return response;
}

}  // namespace ferry::server::handlers
