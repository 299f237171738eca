#include "net/connection.h"

#include <sys/sendfile.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>

#include "base/log.h"

namespace ferry::net {
namespace asio = boost::asio;
namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);
// A connection's read buffer starts at this size and grows to at most twice what has arrived.
constexpr std::size_t first_buffer_bytes = std::size_t{16} * 1024;

// Reads size-prefixed frames through one reusable buffer. Each read takes whatever has arrived, up to the free
// space, so a small request usually comes in, prefix and body, with one recv, and pipelined requests are
// found among bytes already read. The buffer grows with the bytes that arrive, not with the size announced:
// a size prefix alone (4 bytes a connection) must not make the broker allocate up to socket.request.max.bytes.
// Bytes are not zero-filled: every byte is read before it is used.
class frame_reader {
 public:
  explicit frame_reader(asio::ip::tcp::socket& socket) : socket_(socket) {}

  // Makes `count` bytes available at data(); false if the connection ends first.
  asio::awaitable<bool> need(std::size_t count) {
    while (end_ - begin_ < count) {
      if (end_ == capacity_ || capacity_ - begin_ < count) make_room(count);
      auto [ec, n] = co_await socket_.async_read_some(asio::buffer(buffer_.get() + end_, capacity_ - end_), no_throw);
      if (ec) co_return false;
      end_ += n;
    }
    co_return true;
  }
  [[nodiscard]] std::byte* data() const { return buffer_.get() + begin_; }
  [[nodiscard]] std::size_t buffered() const { return end_ - begin_; }
  void consume(std::size_t count) {
    begin_ += count;
    if (begin_ == end_) begin_ = end_ = 0;
  }

 private:
  // Moves the unread bytes to the front and, if `count` still does not fit, grows the buffer.
  void make_room(std::size_t count) {
    const std::size_t buffered = end_ - begin_;
    const std::size_t grown = std::min(count, std::max(buffered * 2, first_buffer_bytes));
    if (grown > capacity_) {
      auto larger = std::make_unique_for_overwrite<std::byte[]>(grown);
      std::copy_n(buffer_.get() + begin_, buffered, larger.get());
      buffer_ = std::move(larger);
      capacity_ = grown;
    } else {
      std::copy(buffer_.get() + begin_, buffer_.get() + end_, buffer_.get());
    }
    begin_ = 0;
    end_ = buffered;
  }

  asio::ip::tcp::socket& socket_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

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

// Writes gathered bytes. Most responses fit in the socket's send buffer, so one direct non-blocking send
// finishes them without a round through the reactor; whatever is left waits for the socket to drain.
asio::awaitable<bool> send_bytes(asio::ip::tcp::socket& socket, std::vector<asio::const_buffer>& pieces) {
  boost::system::error_code ec;
  std::size_t sent = socket.write_some(pieces, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again)
    sent = 0;
  else if (ec)
    co_return false;
  auto unsent = pieces.begin();
  for (; unsent != pieces.end() && sent >= unsent->size(); ++unsent) sent -= unsent->size();
  if (unsent == pieces.end()) co_return true;
  pieces.erase(pieces.begin(), unsent);
  pieces.front() += sent;
  auto [write_ec, n] = co_await asio::async_write(socket, pieces, no_throw);
  co_return !write_ec;
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
      if (!co_await send_bytes(socket, gathered)) co_return false;
      gathered.clear();
    }
    if (!co_await send_file_region(socket, piece.file)) co_return false;
  }
  co_return gathered.empty() || co_await send_bytes(socket, gathered);
}

void configure_client_socket(asio::ip::tcp::socket& socket, const connection_limits& limits) {
  boost::system::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  socket.non_blocking(true, ignored);  // direct sends return would_block instead of waiting
  if (limits.send_buffer_bytes > 0)
    socket.set_option(asio::socket_base::send_buffer_size(limits.send_buffer_bytes), ignored);
  if (limits.receive_buffer_bytes > 0)
    socket.set_option(asio::socket_base::receive_buffer_size(limits.receive_buffer_bytes), ignored);
}

asio::awaitable<void> serve_connection(asio::ip::tcp::socket socket, request_handler& handler, connection_limits limits,
                                       connection_info info) {
  boost::system::error_code ignored;
  configure_client_socket(socket, limits);
  frame_reader reader(socket);
  asio::steady_timer idle(socket.get_executor());
  bool idle_expired = false;
  // Handlers return errors as values; this guard only keeps a bug (or bad_alloc) in one request from
  // taking the whole broker down: that connection closes and the error is logged.
  try {
    for (;;) {
      // Only a wait for the next request can be idle; pipelined requests already read need no timer.
      const bool waits = limits.max_idle_ms > 0 && reader.buffered() < sizeof(std::int32_t);
      if (waits) {
        // Cancelling the socket's read ends the wait below; the handler touches nothing once cancelled.
        idle.expires_after(std::chrono::milliseconds(limits.max_idle_ms));
        idle.async_wait([&socket, &idle_expired](const boost::system::error_code& ec) {
          if (ec) return;
          idle_expired = true;
          boost::system::error_code cancel_ignored;
          socket.cancel(cancel_ignored);
        });
      }
      const bool arrived = co_await reader.need(sizeof(std::int32_t));
      if (!arrived) {
        if (idle_expired) {
          FERRY_LOG_LIMITED(info, "net", 10000) << "closing connection " << info.peer << ": idle for "
                                                << limits.max_idle_ms << " ms (connections.max.idle.ms)";
          if (limits.on_idle_close) limits.on_idle_close();
        }
        break;  // the client went away, or was idle too long
      }
      std::int32_t size_be = 0;
      std::memcpy(&size_be, reader.data(), sizeof size_be);
      const std::int32_t size = boost::endian::big_to_native(size_be);
      if (size < 0 || size > limits.max_request_bytes) {
        FERRY_LOG_LIMITED(warn, "net", 1000)
            << "closing connection " << info.peer << ": request size " << size << " is outside 0.."
            << limits.max_request_bytes << " (socket.request.max.bytes)";
        break;
      }
      const std::size_t frame_bytes = sizeof(std::int32_t) + static_cast<std::size_t>(size);
      if (!co_await reader.need(frame_bytes)) break;
      if (waits) idle.cancel();
      request_outcome outcome = co_await handler.handle(
          std::span(reader.data() + sizeof(std::int32_t), static_cast<std::size_t>(size)), info);
      reader.consume(frame_bytes);
      if (outcome.what == request_outcome::action::close) break;
      if (outcome.what == request_outcome::action::respond && !co_await write_output(socket, outcome.response)) break;
    }
  } catch (const std::exception& e) {
    FERRY_LOG(error, "net") << "closing connection " << info.peer << " after an internal error: " << e.what();
  }
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace ferry::net
