#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/result.h"

namespace ferry::net {

// One outgoing Kafka connection to another broker, used by a caller that sends a request and awaits its answer
// before the next (the replica fetchers; the poll of other leaders' high watermarks for consumer lag). Each call
// has a deadline that closes the socket, so a peer that stops answering (a zombie, a cut network) cannot hold the
// caller; after a failure the caller closes and connects again.
//
// Not thread-safe: used from coroutines on the io_context it was made with. close() may be posted there.
class peer_client {
 public:
  explicit peer_client(boost::asio::io_context& io) : io_(io), socket_(io) {}

  [[nodiscard]] bool is_open() const { return socket_.is_open(); }
  boost::asio::awaitable<result<void>> connect(const std::string& host, std::uint16_t port,
                                               std::chrono::milliseconds timeout);
  // Writes one whole request frame (size prefix included) and reads the response frame into `body` (without its
  // size prefix). A response larger than `max_bytes` fails with protocol_error before any of it is read.
  boost::asio::awaitable<result<void>> round_trip(std::span<const std::byte> frame, std::chrono::milliseconds timeout,
                                                  std::int32_t max_bytes, std::vector<std::byte>& body);
  void close();

 private:
  boost::asio::io_context& io_;
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace ferry::net
