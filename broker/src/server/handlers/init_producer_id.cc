#include "base/log.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Idempotent producers get a cluster-unique producer id (from ZooKeeper-reserved blocks) and epoch 0, as
// Kafka gives them: a fresh id on every call, also when the request names the id the producer had (KIP-360
// lets a transactional producer bump its epoch that way; for an idempotent one, bumping someone's epoch would
// fence the real owner of that id, and Kafka ignores the old id). Transactional ids need the transaction
// coordinator, which does not exist yet.
awaitable<p::init_producer_id_response> handle_init_producer_id(request_context& ctx,
                                                                p::init_producer_id_request& request) {
  p::init_producer_id_response response;
  if (request.transactional_id && !request.transactional_id->empty()) {
    response.error_code = ctx.error(p::error_code::coordinator_not_available);
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
