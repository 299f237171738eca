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

#include "base/guarded.h"
#include "base/log.h"

namespace ferry::net {
namespace asio = boost::asio;
namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);
// A connection's read buffer starts at this size and grows to at most twice what has arrived.
constexpr std::size_t first_buffer_bytes = std::size_t{16} * 1024;

// The connection's one deadline (connections.max.idle.ms), as Kafka's Selector keeps it: it runs whenever the
// connection waits on its socket (for the next request, for the rest of one, for room to write an answer), is
// pushed back whenever bytes move, and when it passes the socket's waits are cancelled, so the connection ends.
// A client that stops reading, or sends half a request, cannot hold a connection (and the segments its answer
// reads) for longer. It does not run while a request is being handled (a long-polling fetch waits longer).
class progress_deadline {
 public:
  progress_deadline(asio::ip::tcp::socket& socket, std::int64_t limit_ms)
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

  asio::ip::tcp::socket& socket_;
  asio::steady_timer timer_;
  const std::chrono::milliseconds limit_;
  std::chrono::steady_clock::time_point last_progress_{};
  bool armed_ = false;
  bool expired_ = false;
};

// Reads size-prefixed frames through one reusable buffer. Each read takes whatever has arrived, up to the free
// space, so a small request usually comes in, prefix and body, with one recv, and pipelined requests are
// found among bytes already read. The buffer grows with the bytes that arrive, not with the size announced:
// a size prefix alone (4 bytes a connection) must not make the broker allocate up to socket.request.max.bytes.
// Bytes are not zero-filled: every byte is read before it is used.
class frame_reader {
 public:
  frame_reader(asio::ip::tcp::socket& socket, progress_deadline& deadline) : socket_(socket), deadline_(deadline) {}

  // Makes `count` bytes available at data(); false if the connection ends first.
  asio::awaitable<bool> need(std::size_t count) {
    while (end_ - begin_ < count) {
      if (end_ == capacity_ || capacity_ - begin_ < count) make_room(count);
      auto [ec, n] = co_await socket_.async_read_some(asio::buffer(buffer_.get() + end_, capacity_ - end_), no_throw);
      if (ec) co_return false;
      deadline_.moved();
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
  progress_deadline& deadline_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

// Sends a file region straight from the page cache to the socket.
asio::awaitable<bool> send_file_region(asio::ip::tcp::socket& socket, const protocol::file_chunk& chunk,
                                       progress_deadline* deadline) {
  off_t position = static_cast<off_t>(chunk.position);
  std::size_t left = chunk.length;
  while (left > 0) {
    const ssize_t sent = ::sendfile(socket.native_handle(), chunk.fd, &position, left);
    if (sent > 0) {
      left -= static_cast<std::size_t>(sent);
      if (deadline != nullptr) deadline->moved();
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
                                 progress_deadline* deadline) {
  for (;;) {
    boost::system::error_code ec;
    std::size_t sent = socket.write_some(pieces, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again)
      sent = 0;
    else if (ec)
      co_return false;
    if (sent > 0 && deadline != nullptr) deadline->moved();
    auto unsent = pieces.begin();
    for (; unsent != pieces.end() && sent >= unsent->size(); ++unsent) sent -= unsent->size();
    if (unsent == pieces.end()) co_return true;
    pieces.erase(pieces.begin(), unsent);
    pieces.front() += sent;
    auto [wait_ec] = co_await socket.async_wait(asio::socket_base::wait_write, no_throw);
    if (wait_ec) co_return false;
  }
}

asio::awaitable<bool> write_response(asio::ip::tcp::socket& socket, const protocol::output_buffer& out,
                                     progress_deadline* deadline) {
  std::vector<asio::const_buffer> gathered;
  for (const auto& piece : out.pieces()) {
    if (piece.file.length == 0) {
      if (!piece.bytes.empty()) gathered.emplace_back(piece.bytes.data(), piece.bytes.size());
      continue;
    }
    if (!gathered.empty()) {
      if (!co_await send_bytes(socket, gathered, deadline)) co_return false;
      gathered.clear();
    }
    if (!co_await send_file_region(socket, piece.file, deadline)) co_return false;
  }
  co_return gathered.empty() || co_await send_bytes(socket, gathered, deadline);
}

}  // namespace

asio::awaitable<bool> write_output(asio::ip::tcp::socket& socket, const protocol::output_buffer& out) {
  co_return co_await write_response(socket, out, nullptr);
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
  progress_deadline deadline(socket, limits.max_idle_ms);
  frame_reader reader(socket, deadline);
  // Handlers return errors as values; this guard only keeps a bug (or bad_alloc) in one request from
  // taking the whole broker down: that connection closes and the error is logged.
  try {
    for (;;) {
      deadline.arm();
      if (!co_await reader.need(sizeof(std::int32_t))) break;  // the client went away, or stopped
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
      deadline.disarm();
      request_outcome outcome = co_await handler.handle(
          std::span(reader.data() + sizeof(std::int32_t), static_cast<std::size_t>(size)), info);
      reader.consume(frame_bytes);
      if (outcome.what == request_outcome::action::close) break;
      deadline.arm();
      // The answer (and the segments it reads) goes when the connection does.
      if (outcome.what == request_outcome::action::respond &&
          !co_await write_response(socket, outcome.response, &deadline))
        break;
    }
    if (deadline.expired()) {
      FERRY_LOG_LIMITED(info, "net", 10000) << "closing connection " << info.peer << ": no bytes moved for "
                                            << limits.max_idle_ms << " ms (connections.max.idle.ms)";
      if (limits.on_idle_close) limits.on_idle_close();
    }
  } catch (const std::exception& e) {
    FERRY_LOG(error, "net") << "closing connection " << info.peer << " after an internal error: " << e.what();
  }
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace ferry::net
