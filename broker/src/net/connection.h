#pragma once

#include <cstdint>
#include <functional>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

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

// Sets a client socket's options: no Nagle delay, non-blocking, and the buffer sizes the limits ask for.
void configure_client_socket(boost::asio::ip::tcp::socket& socket, const connection_limits& limits);

// Serves one client connection as a coroutine: read a size-prefixed frame, hand it to the request handler,
// write the response, repeat. Requests on one connection are handled one at a time and answered in order,
// as Kafka does. A frame whose size is negative or above max_request_bytes closes the connection (only
// this one). The frame buffer grows with the bytes that arrive, so an announced size costs no memory until
// the body comes. Responses' file pieces go out with sendfile(2). A connection whose waits move no bytes for
// max_idle_ms is closed, and with it the answer it was sent (and the segments that answer reads).
boost::asio::awaitable<void> serve_connection(boost::asio::ip::tcp::socket socket, request_handler& handler,
                                              connection_limits limits, connection_info info);

// Writes a response: gathered writes for byte pieces, sendfile for file pieces. False if the connection
// failed part way.
boost::asio::awaitable<bool> write_output(boost::asio::ip::tcp::socket& socket, const protocol::output_buffer& out);

}  // namespace ferry::net
