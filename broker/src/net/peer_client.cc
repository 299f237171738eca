#include "net/peer_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>

#include "base/guarded.h"

namespace ferry::net {
namespace asio = boost::asio;

namespace {

std::error_code to_std(const boost::system::error_code& ec) { return {ec.value(), std::system_category()}; }

}  // namespace

void peer_client::close() {
  boost::system::error_code ignored;
  socket_.close(ignored);
}

asio::awaitable<result<void>> peer_client::connect(const std::string& host, std::uint16_t port,
                                                   std::chrono::milliseconds timeout) {
  asio::ip::tcp::resolver resolver(io_);
  const auto [resolve_error, endpoints] =
      co_await resolver.async_resolve(host, std::to_string(port), asio::as_tuple(asio::use_awaitable));
  if (resolve_error) co_return to_std(resolve_error);
  asio::steady_timer deadline(io_);
  deadline.expires_after(timeout);
  deadline.async_wait(guarded("a peer connection's connect deadline", [this](const boost::system::error_code& ec) {
    if (!ec) close();
  }));
  const auto [connect_error, endpoint] =
      co_await asio::async_connect(socket_, endpoints, asio::as_tuple(asio::use_awaitable));
  deadline.cancel();
  if (connect_error) {
    close();
    co_return to_std(connect_error);
  }
  socket_.set_option(asio::ip::tcp::no_delay(true));
  co_return success();
}

asio::awaitable<result<void>> peer_client::round_trip(std::span<const std::byte> frame,
                                                      std::chrono::milliseconds timeout, std::int32_t max_bytes,
                                                      std::vector<std::byte>& body) {
  asio::steady_timer deadline(io_);
  deadline.expires_after(timeout);
  deadline.async_wait(guarded("a peer request's deadline", [this](const boost::system::error_code& ec) {
    if (!ec) close();
  }));
  const auto [write_error, written] = co_await asio::async_write(socket_, asio::buffer(frame.data(), frame.size()),
                                                                 asio::as_tuple(asio::use_awaitable));
  if (write_error) co_return to_std(write_error);
  std::int32_t size = 0;
  const auto [size_error, got] =
      co_await asio::async_read(socket_, asio::buffer(&size, sizeof size), asio::as_tuple(asio::use_awaitable));
  if (size_error) co_return to_std(size_error);
  size = boost::endian::big_to_native(size);
  if (size < 4 || size > max_bytes) co_return std::make_error_code(std::errc::protocol_error);
  body.resize(static_cast<std::size_t>(size));
  const auto [body_error, read] =
      co_await asio::async_read(socket_, asio::buffer(body), asio::as_tuple(asio::use_awaitable));
  deadline.cancel();
  if (body_error) co_return to_std(body_error);
  co_return success();
}

}  // namespace ferry::net
