#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "net/progress_deadline.h"
#include "net/socket_read_bio.h"
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

// TLS: OpenSSL reading and writing the socket itself (socket_read_bio and a socket BIO on the non-blocking
// descriptor), the coroutine waiting for readiness whenever OpenSSL asks. Unlike Asio's ssl::stream, which moves
// one 17 KiB record per system call through a pair of memory BIOs, a recv takes up to read_ahead_bytes and one
// read_some decrypts every whole record they hold; the buffers are released while a connection is idle. sendfile cannot
// encrypt, so file pieces are read (pread, from the page cache) in chunks of at most write_chunk_bytes into one buffer,
// with the byte pieces around them, and written as TLS records: a connection's memory stays bounded whatever size of
// fetch a client asks for. Requests and answers alternate on a connection, so reads and writes never overlap.
class tls_transport {
 public:
  static constexpr std::size_t write_chunk_bytes = std::size_t{64} * 1024;
  static constexpr std::size_t read_ahead_bytes = std::size_t{64} * 1024;

  // `context` is the listener's context when the connection was accepted; the connection keeps it alive, so a
  // reload (a rotated certificate) affects only later connections.
  tls_transport(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> context);

  boost::asio::ip::tcp::socket& socket() { return socket_; }
  [[nodiscard]] SSL* native_handle() { return ssl_.get(); }
  boost::asio::awaitable<boost::system::error_code> handshake();
  boost::asio::awaitable<std::pair<boost::system::error_code, std::size_t>> read_some(boost::asio::mutable_buffer into);
  boost::asio::awaitable<bool> write(const protocol::output_buffer& out, progress_deadline& deadline);

 private:
  struct ssl_free {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };
  // After an OpenSSL call that returned `result` (errno then `socket_errno`): waits for the socket if OpenSSL asked
  // to (no error then), or the error that ended the call.
  boost::asio::awaitable<boost::system::error_code> wait_or_fail(int result, int socket_errno);
  // Writes the staged bytes.
  boost::asio::awaitable<bool> flush(progress_deadline& deadline);

  std::shared_ptr<boost::asio::ssl::context> context_;
  boost::asio::ip::tcp::socket socket_;
  socket_read_bio reader_;  // outlives ssl_, whose rbio reads through it
  std::unique_ptr<SSL, ssl_free> ssl_;
  std::unique_ptr<std::byte[]> staging_;  // allocated for the length of one write
  std::size_t staged_ = 0;
};

}  // namespace ferry::net
