#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include "net/progress_deadline.h"
#include "protocol/output_buffer.h"

namespace ferry::net {

// The two ways a connection's bytes travel. Both read into the caller's buffer and write whole responses, and
// both report moved bytes to the connection's deadline; serve_connection is written once over either.

// Plain TCP: gathered writes for byte pieces, sendfile(2) for file pieces (the page cache straight to the socket).
class plain_transport {
 public:
  explicit plain_transport(boost::asio::ip::tcp::socket socket) : socket_(std::move(socket)) {}

  boost::asio::ip::tcp::socket& socket() { return socket_; }
  boost::asio::awaitable<std::pair<boost::system::error_code, std::size_t>> read_some(boost::asio::mutable_buffer into);
  // False if the connection failed part way.
  boost::asio::awaitable<bool> write(const protocol::output_buffer& out, progress_deadline& deadline);

 private:
  boost::asio::ip::tcp::socket socket_;
};

// TLS (OpenSSL through Asio's ssl::stream). sendfile cannot encrypt, so file pieces are read (pread, from the
// page cache) in chunks of at most write_chunk_bytes into one buffer, with the byte pieces around them, and
// written as TLS records: a connection's memory stays bounded whatever size of fetch a client asks for.
class tls_transport {
 public:
  static constexpr std::size_t write_chunk_bytes = std::size_t{64} * 1024;

  // `context` is the listener's context when the connection was accepted; the connection keeps it alive, so a
  // reload (a rotated certificate) affects only later connections.
  tls_transport(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> context)
      : context_(std::move(context)), stream_(std::move(socket), *context_) {}

  boost::asio::ip::tcp::socket& socket() { return stream_.next_layer(); }
  [[nodiscard]] SSL* native_handle() { return stream_.native_handle(); }
  boost::asio::awaitable<boost::system::error_code> handshake();
  boost::asio::awaitable<std::pair<boost::system::error_code, std::size_t>> read_some(boost::asio::mutable_buffer into);
  boost::asio::awaitable<bool> write(const protocol::output_buffer& out, progress_deadline& deadline);

 private:
  // Writes the staged bytes.
  boost::asio::awaitable<bool> flush(progress_deadline& deadline);

  std::shared_ptr<boost::asio::ssl::context> context_;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
  std::unique_ptr<std::byte[]> staging_;  // allocated for the length of one write
  std::size_t staged_ = 0;
};

}  // namespace ferry::net
