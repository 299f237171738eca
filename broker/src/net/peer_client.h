#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>

#include "base/result.h"
#include "net/peer_security.h"

namespace ferry::net {

// One outgoing Kafka connection to another broker, used by a caller that sends a request and awaits its answer
// before the next (the replica fetchers; the poll of other leaders' high watermarks for consumer lag; controller
// requests). Each call has a deadline that closes the socket, so a peer that stops answering (a zombie, a cut
// network) cannot hold the caller; after a failure the caller closes and connects again. connect() also makes
// the TLS handshake and the SASL login that `security` asks for, within the same deadline.
//
// Not thread-safe: used from coroutines on the io_context it was made with. close() may be posted there.
class peer_client {
 public:
  // `security` (null: plaintext, no login) must outlive the client.
  explicit peer_client(boost::asio::io_context& io, const peer_security* security = nullptr)
      : io_(io), security_(security), socket_(io) {}

  [[nodiscard]] bool is_open() const { return socket_.is_open() || (tls_ && tls_->next_layer().is_open()); }
  boost::asio::awaitable<result<void>> connect(const std::string& host, std::uint16_t port,
                                               std::chrono::milliseconds timeout);
  // Writes one whole request frame (size prefix included) and reads the response frame into `body` (without its
  // size prefix). A response larger than `max_bytes` fails with protocol_error before any of it is read.
  boost::asio::awaitable<result<void>> round_trip(std::span<const std::byte> frame, std::chrono::milliseconds timeout,
                                                  std::int32_t max_bytes, std::vector<std::byte>& body);
  void close();

 private:
  template <typename Stream>
  boost::asio::awaitable<result<void>> exchange(Stream& stream, std::span<const std::byte> frame,
                                                std::int32_t max_bytes, std::vector<std::byte>& body);
  boost::asio::awaitable<result<void>> secure(const std::string& host);
  boost::asio::awaitable<result<void>> login();
  boost::asio::ip::tcp::socket& lowest_layer() { return tls_ ? tls_->next_layer() : socket_; }

  boost::asio::io_context& io_;
  const peer_security* security_;
  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;  // the one tls_ was made with, kept while it lives
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;  // after a TLS handshake
  std::int32_t correlation_id_ = 0;
};

}  // namespace ferry::net
