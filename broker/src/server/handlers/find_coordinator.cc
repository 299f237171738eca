#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Consumer groups and transactions have no coordinator yet, so every lookup answers
// COORDINATOR_NOT_AVAILABLE, which clients treat as retriable. The API is advertised because librdkafka
// 2.0.2 enables LZ4 only when FindCoordinator v0 is in the broker's range.
awaitable<p::find_coordinator_response> handle_find_coordinator(request_context& ctx,
                                                                p::find_coordinator_request& request) {
  static const std::string reason = "consumer group and transaction coordinators are not available yet";
  p::find_coordinator_response response;
  if (ctx.version() >= 4) {
    for (const auto& key : request.coordinator_keys) {
      auto& c = response.coordinators.emplace_back();
      c.key = key;
      c.node_id = no_broker;
      c.port = -1;
      c.error_code = ctx.error(p::error_code::coordinator_not_available);
      c.error_message = reason;
    }
  } else {
    response.error_code = ctx.error(p::error_code::coordinator_not_available);
    response.error_message = reason;
    response.node_id = no_broker;
    response.port = -1;
  }
  co_return response;
}

}  // namespace ferry::server::handlers
