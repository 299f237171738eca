#include "net/transport.h"

#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

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

asio::awaitable<boost::system::error_code> tls_transport::handshake() {
  auto [ec] = co_await stream_.async_handshake(asio::ssl::stream_base::server, no_throw);
  co_return ec;
}

asio::awaitable<std::pair<boost::system::error_code, std::size_t>> tls_transport::read_some(asio::mutable_buffer into) {
  auto [ec, n] = co_await stream_.async_read_some(into, no_throw);
  co_return std::pair{ec, n};
}

asio::awaitable<bool> tls_transport::flush(progress_deadline& deadline) {
  if (staged_ == 0) co_return true;
  auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(staging_.get(), staged_), no_throw);
  if (ec) co_return false;
  deadline.moved();
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
