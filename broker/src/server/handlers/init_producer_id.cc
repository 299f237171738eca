#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"
#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// KIP-588: PRODUCER_FENCED from InitProducerId v4.
constexpr std::int16_t first_version_with_producer_fenced = 4;

}  // namespace

// Idempotent producers get a cluster-unique producer id (from ZooKeeper-reserved blocks) and epoch 0, as
// Kafka gives them: a fresh id on every call, also when the request names the id the producer had (KIP-360 lets
// a transactional producer bump its epoch that way; for an idempotent one, bumping someone's epoch would fence
// the real owner of that id, and Kafka ignores the old id). A transactional id goes to its transaction
// coordinator, which keeps one producer id per transactional id and bumps its epoch, fencing older producers.
awaitable<p::init_producer_id_response> handle_init_producer_id(request_context& ctx,
                                                                p::init_producer_id_request& request) {
  p::init_producer_id_response response;
  auto& broker = ctx.broker;
  const bool transactional = request.transactional_id && !request.transactional_id->empty();
  // Kafka's rule: Write on the transactional id; without one, IdempotentWrite on the cluster or Write on some topic.
  const bool allowed =
      transactional
          ? authorize(ctx, authz::operation::write, authz::resource_type::transactional_id, *request.transactional_id)
          : may(ctx, authz::operation::idempotent_write, authz::resource_type::cluster, authz::cluster_name) ||
                authorize_any(ctx, authz::operation::write, authz::resource_type::topic);
  if (!allowed) {
    response.error_code = ctx.error(transactional ? p::error_code::transactional_id_authorization_failed
                                                  : p::error_code::cluster_authorization_failed);
    response.producer_id = no_producer_id;
    response.producer_epoch = producer_epoch{-1};
    co_return response;
  }
  if (transactional) {
    std::optional<txn::producer_identity> expected;
    if (request.producer_id != no_producer_id)
      expected = txn::producer_identity{request.producer_id, request.producer_epoch};
    auto reply = std::make_shared<coordinator_reply<result<txn::producer_identity>>>(ctx.connection.executor);
    const auto now = broker.clock.now_ms();
    // The coordinator may reserve a block of producer ids in ZooKeeper: off the network thread.
    co_await run_on_zookeeper(broker, [&broker, &request, &expected, &reply, now] {
      broker.transactions.init_producer_id(*request.transactional_id, request.transaction_timeout_ms, expected, now,
                                           reply->callback());
      return true;
    });
    while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
    const auto& granted = reply->value();
    if (!granted) {
      response.error_code =
          ctx.error(to_kafka_txn_error(granted.error(), ctx.version() >= first_version_with_producer_fenced));
      response.producer_id = no_producer_id;
      response.producer_epoch = producer_epoch{-1};
      co_return response;
    }
    response.producer_id = granted.value().id;
    response.producer_epoch = granted.value().epoch;
    co_return response;
  }
  auto& ids = broker.producer_id_source;
  const auto allocated = co_await run_on_zookeeper(broker, [&ids] { return ids.next(); });
  if (!allocated) {
    FERRY_LOG(warn, "server") << "cannot allocate a producer id: " << allocated.error().message();
    response.error_code = ctx.error(p::error_code::coordinator_not_available);
    co_return response;
  }
  response.producer_id = allocated.value();
  response.producer_epoch = producer_epoch{0};
  co_return response;
}

}  // namespace ferry::server::handlers
