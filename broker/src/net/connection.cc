#include "net/connection.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/endian/conversion.hpp>

#include "base/log.h"
#include "net/progress_deadline.h"
#include "net/transport.h"

namespace ferry::net {
namespace asio = boost::asio;
namespace {

// A connection's read buffer starts at this size and grows to at most twice what has arrived.
constexpr std::size_t first_buffer_bytes = std::size_t{16} * 1024;

// Reads size-prefixed frames through one reusable buffer. Each read takes whatever has arrived, up to the free
// space, so a small request usually comes in, prefix and body, with one recv, and pipelined requests are
// found among bytes already read. The buffer grows with the bytes that arrive, not with the size announced:
// a size prefix alone (4 bytes a connection) must not make the broker allocate up to socket.request.max.bytes.
// Bytes are not zero-filled: every byte is read before it is used.
template <typename Transport>
class frame_reader {
 public:
  frame_reader(Transport& transport, progress_deadline& deadline) : transport_(transport), deadline_(deadline) {}

  // Makes `count` bytes available at data(); false if the connection ends first.
  asio::awaitable<bool> need(std::size_t count) {
    while (end_ - begin_ < count) {
      if (end_ == capacity_ || capacity_ - begin_ < count) make_room(count);
      auto [ec, n] = co_await transport_.read_some(asio::buffer(buffer_.get() + end_, capacity_ - end_));
      if (ec) co_return false;
      deadline_.moved();
      end_ += n;
    }
    co_return true;
  }
  [[nodiscard]] std::byte* data() const { return buffer_.get() + begin_; }
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

  Transport& transport_;
  progress_deadline& deadline_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

// The request loop over either transport.
template <typename Transport>
asio::awaitable<void> serve_frames(Transport& transport, progress_deadline& deadline, request_handler& handler,
                                   const connection_limits& limits, connection_session* session,
                                   connection_info& info) {
  frame_reader<Transport> reader(transport, deadline);
  for (;;) {
    deadline.arm();
    if (!co_await reader.need(sizeof(std::int32_t))) break;  // the client went away, or stopped
    std::int32_t size_be = 0;
    std::memcpy(&size_be, reader.data(), sizeof size_be);
    const std::int32_t size = boost::endian::big_to_native(size_be);
    const std::int32_t limit =
        session != nullptr ? std::min(limits.max_request_bytes, session->max_frame_bytes()) : limits.max_request_bytes;
    if (size < 0 || size > limit) {
      FERRY_LOG_LIMITED(warn, "net", 1000)
          << "closing connection " << info.peer << " on " << info.listener << ": request size " << size
          << " is outside 0.." << limit
          << (limit < limits.max_request_bytes ? " (sasl.server.max.receive.size, before authentication)"
                                               : " (socket.request.max.bytes)");
      break;
    }
    const std::size_t frame_bytes = sizeof(std::int32_t) + static_cast<std::size_t>(size);
    if (!co_await reader.need(frame_bytes)) break;
    deadline.disarm();
    const std::span frame(reader.data() + sizeof(std::int32_t), static_cast<std::size_t>(size));
    // Not a conditional expression: GCC 12 mishandles co_await in the branches of ?: (the result is destroyed early).
    request_outcome outcome;
    if (session != nullptr)
      outcome = co_await session->handle(frame, info);
    else
      outcome = co_await handler.handle(frame, info);
    reader.consume(frame_bytes);
    if (outcome.delay.count() > 0) {
      asio::steady_timer pause(co_await asio::this_coro::executor, outcome.delay);
      co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (outcome.what == request_outcome::action::close) break;
    deadline.arm();
    // The answer (and the segments it reads) goes when the connection does.
    const bool answer =
        outcome.what == request_outcome::action::respond || outcome.what == request_outcome::action::respond_and_close;
    if (answer && !co_await transport.write(outcome.response, deadline)) break;
    if (outcome.what == request_outcome::action::respond_and_close) break;
    if (outcome.mute_after.count() > 0) {
      deadline.disarm();  // the client is not the one who is slow
      asio::steady_timer muted(co_await asio::this_coro::executor, outcome.mute_after);
      co_await muted.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }
}

// The TLS handshake, bounded by the connection's deadline; the principal from the client's certificate.
asio::awaitable<bool> establish_tls(tls_transport& transport, progress_deadline& deadline,
                                    const connection_security& security, bool sasl, connection_info& info) {
  deadline.arm();
  const auto ec = co_await transport.handshake();
  if (ec) {
    // A client that never finished its handshake is counted as an idle connection (by the caller), not as a
    // failed handshake.
    if (deadline.expired()) co_return false;
    FERRY_LOG_LIMITED(info, "net", 1000) << "TLS handshake with " << info.peer << " on " << info.listener
                                         << " failed: " << ec.message();
    if (security.on_tls_failure) security.on_tls_failure(ec.message());
    co_return false;
  }
  deadline.moved();  // the wait for the first request starts now
  // On SASL_SSL the principal comes from SASL, as in Kafka, whatever certificate the client showed.
  if (!sasl && security.tls_principal) {
    auto principal = security.tls_principal(transport.native_handle());
    if (!principal) {
      FERRY_LOG_LIMITED(warn, "net", 1000) << "refusing TLS client " << info.peer << " on " << info.listener
                                           << ": no rule of ssl.principal.mapping.rules matches its certificate";
      if (security.on_tls_failure) security.on_tls_failure("no principal mapping rule matches");
      co_return false;
    }
    info.principal = std::move(*principal);
  }
  co_return true;
}

}  // namespace

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
                                       const connection_security& security, connection_info info) {
  configure_client_socket(socket, limits);
  std::unique_ptr<connection_session> session = security.sessions ? security.sessions(handler) : nullptr;
  std::unique_ptr<plain_transport> plain;
  std::unique_ptr<tls_transport> tls;
  if (security.tls_context)
    tls = std::make_unique<tls_transport>(std::move(socket), security.tls_context());
  else
    plain = std::make_unique<plain_transport>(std::move(socket));
  asio::ip::tcp::socket& raw = tls ? tls->socket() : plain->socket();
  progress_deadline deadline(raw, limits.max_idle_ms);
  // Handlers return errors as values; this guard only keeps a bug (or bad_alloc) in one request from
  // taking the whole broker down: that connection closes and the error is logged.
  try {
    if (tls) {
      if (co_await establish_tls(*tls, deadline, security, session != nullptr, info))
        co_await serve_frames(*tls, deadline, handler, limits, session.get(), info);
    } else {
      co_await serve_frames(*plain, deadline, handler, limits, session.get(), info);
    }
    if (deadline.expired()) {
      FERRY_LOG_LIMITED(info, "net", 10000) << "closing connection " << info.peer << ": no bytes moved for "
                                            << limits.max_idle_ms << " ms (connections.max.idle.ms)";
      if (limits.on_idle_close) limits.on_idle_close();
    }
  } catch (const std::exception& e) {
    FERRY_LOG(error, "net") << "closing connection " << info.peer << " after an internal error: " << e.what();
  }
  boost::system::error_code ignored;
  raw.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  raw.close(ignored);
}

}  // namespace ferry::net
