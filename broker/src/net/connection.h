#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "net/connection_session.h"
#include "net/request_handler.h"

namespace ferry::net {

struct connection_limits {
  std::int32_t max_request_bytes = 104857600;  // socket.request.max.bytes
  std::int32_t send_buffer_bytes = -1;         // socket.send.buffer.bytes: SO_SNDBUF; -1 keeps the kernel's
  std::int32_t receive_buffer_bytes = -1;      // socket.receive.buffer.bytes: SO_RCVBUF; -1 likewise
  // connections.max.idle.ms: a connection whose socket moves no bytes for this long while it waits (for a
  // request, the rest of one, or room to write an answer) is closed, as Kafka's Selector does; -1 never.
  std::int64_t max_idle_ms = 600000;
  // Called (on the connection's thread) when a connection is closed for idleness.
  std::function<void()> on_idle_close;
};

// How a listener secures its connections. net knows nothing of certificates or users: the app fills these in
// from the security library.
struct connection_security {
  // TLS listeners: the context a new connection uses (the listener's current one; a reload changes it for later
  // connections only). Empty: plaintext.
  std::function<std::shared_ptr<boost::asio::ssl::context>()> tls_context;
  // The principal of a TLS client after its handshake (its mapped certificate subject, or User:ANONYMOUS);
  // nullopt refuses the client (no mapping rule matched its subject). Not called when a session authenticates
  // the connection (SASL_SSL).
  std::function<std::optional<std::string>(SSL* handshake)> tls_principal;
  // A TLS handshake failed (an untrusted certificate, a client speaking plaintext, a protocol mismatch).
  std::function<void(const std::string& reason)> on_tls_failure;
  // SASL listeners: the session each connection's frames go through. Empty: frames go to the request handler.
  session_factory sessions;
};

// Sets a client socket's options: no Nagle delay, non-blocking, and the buffer sizes the limits ask for.
void configure_client_socket(boost::asio::ip::tcp::socket& socket, const connection_limits& limits);

// Serves one client connection as a coroutine: (a TLS handshake,) then read a size-prefixed frame, hand it to the
// session or the request handler, write the response, repeat. Requests on one connection are handled one at a
// time and answered in order, as Kafka does. A frame whose size is negative or above the limit (max_request_bytes,
// or the session's while it authenticates) closes the connection (only this one). The frame buffer grows with
// the bytes that arrive, so an announced size costs no memory until the body comes. Responses' file pieces go out
// with sendfile(2) on plaintext, in bounded chunks through TLS. A connection whose waits move no bytes for
// max_idle_ms is closed, and with it the answer it was sent (and the segments that answer reads). `security` must
// outlive the connection (the listener owns it).
boost::asio::awaitable<void> serve_connection(boost::asio::ip::tcp::socket socket, request_handler& handler,
                                              connection_limits limits, const connection_security& security,
                                              connection_info info);

}  // namespace ferry::net
