#include "base/log.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Idempotent producers get a cluster-unique producer id (from ZooKeeper-reserved blocks) and epoch 0. A
// producer that already has an id (v3+, KIP-360) gets the same id with the next epoch, which fences its
// earlier incarnation. Transactional ids need the transaction coordinator, which does not exist yet.
awaitable<p::init_producer_id_response> handle_init_producer_id(request_context& ctx,
                                                                p::init_producer_id_request& request) {
  p::init_producer_id_response response;
  if (request.transactional_id && !request.transactional_id->empty()) {
    response.error_code = ctx.error(p::error_code::coordinator_not_available);
    co_return response;
  }
  const bool bump = request.producer_id.value() >= 0 && request.producer_epoch.value() >= 0 &&
                    request.producer_epoch.value() < INT16_MAX - 1;
  if (bump) {
    response.producer_id = request.producer_id;
    response.producer_epoch = producer_epoch{static_cast<std::int16_t>(request.producer_epoch.value() + 1)};
    co_return response;
  }
  auto& ids = ctx.broker.producer_id_source;
  const auto allocated = co_await run_blocking(ctx.broker, [&ids] { return ids.next(); });
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
