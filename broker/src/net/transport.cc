#include "net/transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ferry::net {
namespace asio = boost::asio;
namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);

// Sends a file region straight from the page cache to the socket.
asio::awaitable<bool> send_file_region(asio::ip::tcp::socket& socket, const protocol::file_chunk& chunk,
                                       progress_deadline& deadline) {
  off_t position = static_cast<off_t>(chunk.position);
  std::size_t left = chunk.length;
  while (left > 0) {
    const ssize_t sent = ::sendfile(socket.native_handle(), chunk.fd, &position, left);
    if (sent > 0) {
      left -= static_cast<std::size_t>(sent);
      deadline.moved();
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto [ec] = co_await socket.async_wait(asio::socket_base::wait_write, no_throw);
      if (ec) co_return false;
      continue;
    }
    // 0 means the file is shorter than the slice promised (truncated under us): the response can no longer be
    // completed, and the client must not get a partial frame, so the connection ends.
    co_return false;
  }
  co_return true;
}

// Writes gathered bytes. Most responses fit in the socket's send buffer, so one direct non-blocking send
// finishes them without a round through the reactor; whatever is left waits for the socket to drain.
asio::awaitable<bool> send_bytes(asio::ip::tcp::socket& socket, std::vector<asio::const_buffer>& pieces,
                                 progress_deadline& deadline) {
  for (;;) {
    boost::system::error_code ec;
    std::size_t sent = socket.write_some(pieces, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again)
      sent = 0;
    else if (ec)
      co_return false;
    if (sent > 0) deadline.moved();
    auto unsent = pieces.begin();
    for (; unsent != pieces.end() && sent >= unsent->size(); ++unsent) sent -= unsent->size();
    if (unsent == pieces.end()) co_return true;
    pieces.erase(pieces.begin(), unsent);
    pieces.front() += sent;
    auto [wait_ec] = co_await socket.async_wait(asio::socket_base::wait_write, no_throw);
    if (wait_ec) co_return false;
  }
}

}  // namespace

asio::awaitable<std::pair<boost::system::error_code, std::size_t>> plain_transport::read_some(
    asio::mutable_buffer into) {
  auto [ec, n] = co_await socket_.async_read_some(into, no_throw);
  co_return std::pair{ec, n};
}

asio::awaitable<bool> plain_transport::write(const protocol::output_buffer& out, progress_deadline& deadline) {
  std::vector<asio::const_buffer> gathered;
  for (const auto& piece : out.pieces()) {
    if (piece.file.length == 0) {
      if (!piece.bytes.empty()) gathered.emplace_back(piece.bytes.data(), piece.bytes.size());
      continue;
    }
    if (!gathered.empty()) {
      if (!co_await send_bytes(socket_, gathered, deadline)) co_return false;
      gathered.clear();
    }
    if (!co_await send_file_region(socket_, piece.file, deadline)) co_return false;
  }
  co_return gathered.empty() || co_await send_bytes(socket_, gathered, deadline);
}

tls_transport::tls_transport(asio::ip::tcp::socket socket, std::shared_ptr<asio::ssl::context> context)
    : context_(std::move(context)),
      socket_(std::move(socket)),
      reader_(static_cast<int>(socket_.native_handle()), read_ahead_bytes),
      ssl_(SSL_new(context_->native_handle())) {
  if (!ssl_) return;  // handshake() reports it
  BIO* rbio = reader_.make_bio();
  BIO* wbio = BIO_new_socket(static_cast<int>(socket_.native_handle()), BIO_NOCLOSE);
  if (rbio == nullptr || wbio == nullptr) {
    BIO_free(rbio);
    BIO_free(wbio);
    ssl_.reset();
    return;
  }
  SSL_set_bio(ssl_.get(), rbio, wbio);
  SSL_set_accept_state(ssl_.get());
  SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

asio::awaitable<boost::system::error_code> tls_transport::wait_or_fail(int result, int socket_errno) {
  const int reason = SSL_get_error(ssl_.get(), result);
  if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) {
    // Waiting to read is where a connection idles: its record buffers go (kept while busy, not freed per record
    // as SSL_MODE_RELEASE_BUFFERS would). OpenSSL keeps them if they hold part of a record.
    if (reason == SSL_ERROR_WANT_READ) SSL_free_buffers(ssl_.get());
    auto [ec] = co_await socket_.async_wait(
        reason == SSL_ERROR_WANT_READ ? asio::socket_base::wait_read : asio::socket_base::wait_write, no_throw);
    co_return ec;
  }
  boost::system::error_code ec;
  const unsigned long queued = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  if (reason == SSL_ERROR_ZERO_RETURN) {
    ec = asio::error::eof;
  } else if (reason == SSL_ERROR_SYSCALL && queued == 0) {
    // The peer closed the socket without close_notify, or the socket failed.
    ec = socket_errno != 0 ? boost::system::error_code(socket_errno, boost::system::system_category())
                           : boost::system::error_code(asio::ssl::error::stream_truncated);
  } else if (queued != 0 && ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    ec = asio::ssl::error::stream_truncated;
  } else {
    ec = boost::system::error_code(static_cast<int>(queued), asio::error::get_ssl_category());
  }
  ERR_clear_error();
  co_return ec ? ec : boost::system::error_code(asio::error::fault);
}

asio::awaitable<boost::system::error_code> tls_transport::handshake() {
  if (!ssl_) co_return boost::system::error_code(asio::error::no_memory);
  for (;;) {
    if (ERR_peek_error() != 0) ERR_clear_error();  // SSL_get_error reads the thread's queue
    const int result = SSL_do_handshake(ssl_.get());
    if (result == 1) co_return boost::system::error_code{};
    if (const auto ec = co_await wait_or_fail(result, errno)) co_return ec;
  }
}

// SSL_read_ex yields one record at a time; the records already received are read in the same call.
asio::awaitable<std::pair<boost::system::error_code, std::size_t>> tls_transport::read_some(asio::mutable_buffer into) {
  auto* const out = static_cast<std::byte*>(into.data());
  std::size_t total = 0;
  for (;;) {
    if (ERR_peek_error() != 0) ERR_clear_error();
    std::size_t read = 0;
    const int result = SSL_read_ex(ssl_.get(), out + total, into.size() - total, &read);
    if (result == 1) {
      total += read;
      if (total == into.size() || (SSL_pending(ssl_.get()) == 0 && reader_.buffered() == 0)) break;
      continue;
    }
    // What was read comes first; a failure recurs on the next call.
    if (total > 0) break;
    if (const auto ec = co_await wait_or_fail(result, errno)) co_return std::pair{ec, std::size_t{0}};
  }
  if (ERR_peek_error() != 0) ERR_clear_error();
  co_return std::pair{boost::system::error_code{}, total};
}

asio::awaitable<bool> tls_transport::flush(progress_deadline& deadline) {
  std::size_t done = 0;
  while (done < staged_) {
    if (ERR_peek_error() != 0) ERR_clear_error();
    std::size_t written = 0;
    const int result = SSL_write_ex(ssl_.get(), staging_.get() + done, staged_ - done, &written);
    if (result == 1) {
      done += written;
      deadline.moved();
      continue;
    }
    if (co_await wait_or_fail(result, errno)) co_return false;
  }
  staged_ = 0;
  co_return true;
}

asio::awaitable<bool> tls_transport::write(const protocol::output_buffer& out, progress_deadline& deadline) {
  staging_ = std::make_unique_for_overwrite<std::byte[]>(write_chunk_bytes);
  staged_ = 0;
  bool ok = true;
  for (const auto& piece : out.pieces()) {
    for (std::size_t done = 0; ok && done < piece.bytes.size();) {
      const auto n = std::min(piece.bytes.size() - done, write_chunk_bytes - staged_);
      std::memcpy(staging_.get() + staged_, piece.bytes.data() + done, n);
      staged_ += n;
      done += n;
      if (staged_ == write_chunk_bytes) ok = co_await flush(deadline);
    }
    for (std::size_t done = 0; ok && done < piece.file.length;) {
      const auto want = std::min<std::size_t>(piece.file.length - done, write_chunk_bytes - staged_);
      const ssize_t got =
          ::pread(piece.file.fd, staging_.get() + staged_, want, static_cast<off_t>(piece.file.position + done));
      if (got < 0 && errno == EINTR) continue;
      // 0: the file is shorter than the slice promised (truncated under us); as with sendfile, the frame cannot
      // be completed and the connection ends.
      if (got <= 0) {
        ok = false;
        break;
      }
      staged_ += static_cast<std::size_t>(got);
      done += static_cast<std::size_t>(got);
      if (staged_ == write_chunk_bytes) ok = co_await flush(deadline);
    }
    if (!ok) break;
  }
  if (ok) ok = co_await flush(deadline);
  staging_.reset();
  co_return ok;
}

}  // namespace ferry::net
