#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include <boost/asio/awaitable.hpp>

#include "net/request_handler.h"

namespace ferry::net {

// The per-connection layer between the socket and the request handler on listeners that authenticate their
// clients (SASL): it takes every frame, answers the authentication exchange itself, passes ApiVersions and
// (once authenticated) everything else to the request handler, and closes a connection whose session has
// expired. It sets info.principal when the client has authenticated.
class connection_session {
 public:
  virtual ~connection_session() = default;
  // The largest request frame the connection reads now: sasl.server.max.receive.size until the client has
  // authenticated, then the listener's socket.request.max.bytes. A larger announced size closes the connection
  // before its body is read.
  [[nodiscard]] virtual std::int32_t max_frame_bytes() const = 0;
  // One frame, without its size prefix.
  virtual boost::asio::awaitable<request_outcome> handle(std::span<std::byte> frame, connection_info& info) = 0;
};

// Makes the session of each new connection of a listener (on the connection's thread).
using session_factory = std::function<std::unique_ptr<connection_session>(request_handler& handler)>;

}  // namespace ferry::net
