#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// SaslHandshake and SaslAuthenticate reach the dispatcher only where no authentication is under way: on a
// listener without SASL, or after the connection's session (security/sasl_session.h) has authenticated and is
// not re-authenticating. Kafka's KafkaApis answers ILLEGAL_SASL_STATE there, and so do we.
awaitable<p::sasl_handshake_response> handle_sasl_handshake(request_context& ctx, p::sasl_handshake_request&) {
  p::sasl_handshake_response response;
  response.error_code = ctx.error(p::error_code::illegal_sasl_state);
  co_return response;
}

awaitable<p::sasl_authenticate_response> handle_sasl_authenticate(request_context& ctx, p::sasl_authenticate_request&) {
  p::sasl_authenticate_response response;
  response.error_code = ctx.error(p::error_code::illegal_sasl_state);
  response.error_message = "Unexpected SaslAuthenticate: the connection is not authenticating";
  co_return response;
}

}  // namespace ferry::server::handlers
