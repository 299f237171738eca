#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/result.h"
#include "net/connection.h"
#include "net/io_context_pool.h"
#include "net/request_handler.h"

namespace ferry::net {

// Accepts Kafka client connections on one listener (plaintext, TLS, with or without SASL: `security`) (on the pool's
// main context) and serves each on one of the pool's contexts, round-robin: a connection's requests run one after
// another on one thread, and different connections spread over the network threads.
class tcp_server {
 public:
  // `listener` names the listener (connection_info::listener). on_accept_error runs (on the accepting thread)
  // each time accept fails.
  tcp_server(io_context_pool& pool, request_handler& handler, std::string listener, connection_limits limits,
             connection_security security = {}, std::function<void()> on_accept_error = {});

  // Binds and listens; the error names the address when the port is taken.
  result<void> listen(const std::string& host, std::uint16_t port);
  // Starts accepting; returns immediately.
  void start();
  // Stops accepting new connections. Open connections end when the pool stops. Call it on the pool's main
  // context (the acceptor's thread), as broker_app::stop() does: Asio's acceptor is not thread-safe.
  void stop();

  [[nodiscard]] std::uint16_t bound_port() const { return bound_port_; }
  [[nodiscard]] std::int64_t open_connections() const { return open_connections_.load(); }
  [[nodiscard]] std::uint64_t accept_errors() const { return accept_errors_.load(); }

  // A failed accept (EMFILE, ENFILE, ENOBUFS) is retried after this long, doubling up to the maximum.
  static constexpr std::chrono::milliseconds min_accept_backoff{10};
  static constexpr std::chrono::milliseconds max_accept_backoff{1000};

 private:
  boost::asio::awaitable<void> accept_loop();

  io_context_pool& pool_;
  request_handler& handler_;
  const std::string listener_;
  connection_limits limits_;
  const connection_security security_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t bound_port_ = 0;
  std::atomic<std::uint64_t> next_connection_id_{1};
  std::atomic<std::int64_t> open_connections_{0};
  std::atomic<std::uint64_t> accept_errors_{0};
  std::function<void()> on_accept_error_;
};

}  // namespace ferry::net
