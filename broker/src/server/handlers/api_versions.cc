#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Advertises every API the dispatcher serves, with the ranges from broker/schemas. Those ranges are chosen
// for real clients (docs/protocol.md): Produce from v0 because librdkafka compresses only when v0 is in the
// range, Metadata from v0 for kafka-python's probe, Fetch v4 and up so batches are never down-converted.
awaitable<p::api_versions_response> handle_api_versions(request_context& ctx, p::api_versions_request&) {
  p::api_versions_response response;
  for (const auto& api : p::all_apis) response.api_keys.push_back({api.key, api.min_version, api.max_version});
  response.error_code = ctx.error(p::error_code::none);
  co_return response;
}

}  // namespace ferry::server::handlers
