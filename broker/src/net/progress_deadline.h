#pragma once

#include <chrono>
#include <cstdint>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/guarded.h"

namespace ferry::net {

// A connection's one deadline (connections.max.idle.ms), as Kafka's Selector keeps it: it runs whenever the
// connection waits on its socket (for the next request, for the rest of one, for room to write an answer, for a
// TLS handshake), is pushed back whenever bytes move, and when it passes the socket's waits are cancelled, so the
// connection ends. A client that stops reading, or sends half a request, cannot hold a connection (and the
// segments its answer reads) for longer. It does not run while a request is being handled (a long-polling fetch
// waits longer).
class progress_deadline {
 public:
  progress_deadline(boost::asio::ip::tcp::socket& socket, std::int64_t limit_ms)
      : socket_(socket), timer_(socket.get_executor()), limit_(limit_ms) {}

  // The connection is about to wait on its socket.
  void arm() {
    if (limit_.count() <= 0 || armed_) return;
    armed_ = true;
    moved();
    wait_until(last_progress_ + limit_);
  }
  // It is handling a request.
  void disarm() {
    if (!armed_) return;
    armed_ = false;
    timer_.cancel();
  }
  // Bytes moved.
  void moved() { last_progress_ = std::chrono::steady_clock::now(); }
  [[nodiscard]] bool expired() const { return expired_; }

 private:
  void wait_until(std::chrono::steady_clock::time_point due) {
    timer_.expires_at(due);
    timer_.async_wait(guarded("a connection's deadline", [this](const boost::system::error_code& ec) {
      // The error comes first: a timer destroyed with the connection calls back with one, and `this` is gone.
      if (ec || !armed_) return;
      const auto due = last_progress_ + limit_;
      if (std::chrono::steady_clock::now() < due) {
        wait_until(due);
        return;
      }
      expired_ = true;
      boost::system::error_code ignored;
      socket_.cancel(ignored);
    }));
  }

  boost::asio::ip::tcp::socket& socket_;
  boost::asio::steady_timer timer_;
  const std::chrono::milliseconds limit_;
  std::chrono::steady_clock::time_point last_progress_{};
  bool armed_ = false;
  bool expired_ = false;
};

}  // namespace ferry::net
