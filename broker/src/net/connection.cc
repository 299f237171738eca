#include "net/connection.h"

#include <sys/sendfile.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>
#include <algorithm>
#include <cerrno>
#include <memory>
#include <vector>

#include "base/log.h"

namespace ferry::net {
namespace asio = boost::asio;
namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);
// A request body is read into a buffer of at most this much first, then of twice what arrived so far.
constexpr std::size_t first_read_bytes = 64 * 1024;

// Sends a file region straight from the page cache to the socket.
asio::awaitable<bool> send_file_region(asio::ip::tcp::socket& socket, const protocol::file_chunk& chunk) {
  off_t position = static_cast<off_t>(chunk.position);
  std::size_t left = chunk.length;
  while (left > 0) {
    const ssize_t sent = ::sendfile(socket.native_handle(), chunk.fd, &position, left);
    if (sent > 0) {
      left -= static_cast<std::size_t>(sent);
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

}  // namespace

asio::awaitable<bool> write_output(asio::ip::tcp::socket& socket, const protocol::output_buffer& out) {
  std::vector<asio::const_buffer> gathered;
  for (const auto& piece : out.pieces()) {
    if (piece.file.length == 0) {
      if (!piece.bytes.empty()) gathered.emplace_back(piece.bytes.data(), piece.bytes.size());
      continue;
    }
    if (!gathered.empty()) {
      auto [ec, n] = co_await asio::async_write(socket, gathered, no_throw);
      if (ec) co_return false;
      gathered.clear();
    }
    if (!co_await send_file_region(socket, piece.file)) co_return false;
  }
  if (!gathered.empty()) {
    auto [ec, n] = co_await asio::async_write(socket, gathered, no_throw);
    if (ec) co_return false;
  }
  co_return true;
}

asio::awaitable<void> serve_connection(asio::ip::tcp::socket socket, request_handler& handler,
                                       connection_limits limits, connection_info info) {
  boost::system::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  socket.native_non_blocking(true, ignored);
  // Grows to the largest request seen and is reused; not zero-filled, as every byte is read before use.
  std::unique_ptr<std::byte[]> frame;
  std::size_t capacity = 0;
  // Handlers return errors as values; this guard only keeps a bug (or bad_alloc) in one request from
  // taking the whole broker down: that connection closes and the error is logged.
  try {
    for (;;) {
      std::int32_t size_be = 0;
      auto [read_ec, n] = co_await asio::async_read(socket, asio::buffer(&size_be, sizeof size_be), no_throw);
      if (read_ec) break;  // the client went away
      const std::int32_t size = boost::endian::big_to_native(size_be);
      if (size < 0 || size > limits.max_request_bytes) {
        FERRY_LOG(warn, "net") << "closing connection " << info.peer << ": request size " << size
                               << " is outside 0.." << limits.max_request_bytes << " (socket.request.max.bytes)";
        break;
      }
      // The buffer grows with the bytes that arrive, not with the size announced: a size prefix alone (4 bytes
      // a connection) must not make the broker allocate up to socket.request.max.bytes.
      const auto want = static_cast<std::size_t>(size);
      std::size_t have = 0;
      bool complete = true;
      while (have < want) {
        const std::size_t next = std::min(want, std::max(have * 2, first_read_bytes));
        if (next > capacity) {
          auto larger = std::make_unique_for_overwrite<std::byte[]>(next);
          std::copy_n(frame.get(), have, larger.get());
          frame = std::move(larger);
          capacity = next;
        }
        auto [body_ec, m] =
            co_await asio::async_read(socket, asio::buffer(frame.get() + have, next - have), no_throw);
        if (body_ec) {
          complete = false;
          break;
        }
        have = next;
      }
      if (!complete) break;
      request_outcome outcome = co_await handler.handle(std::span(frame.get(), want), info);
      if (outcome.what == request_outcome::action::close) break;
      if (outcome.what == request_outcome::action::respond && !co_await write_output(socket, outcome.response))
        break;
    }
  } catch (const std::exception& e) {
    FERRY_LOG(error, "net") << "closing connection " << info.peer << " after an internal error: " << e.what();
  }
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace ferry::net
