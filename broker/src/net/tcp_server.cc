#include "net/tcp_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"

namespace ferry::net {
namespace asio = boost::asio;

tcp_server::tcp_server(asio::io_context& io, request_handler& handler, connection_limits limits)
    : io_(io), handler_(handler), limits_(limits), acceptor_(io) {}

result<void> tcp_server::listen(const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) return std::error_code(ec);
  const asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return std::error_code(ec);
  bound_port_ = acceptor_.local_endpoint().port();
  return success();
}

void tcp_server::start() { asio::co_spawn(acceptor_.get_executor(), accept_loop(), asio::detached); }

void tcp_server::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> tcp_server::accept_loop() {
  for (;;) {
    auto strand = asio::make_strand(io_);
    auto [ec, socket] = co_await acceptor_.async_accept(strand, asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) {
      // Out of descriptors and the like: keep serving the connections we have.
      FERRY_LOG(warn, "net") << "accept failed: " << ec.message();
      continue;
    }
    connection_info info;
    info.id = next_connection_id_++;
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    info.peer = peer_ec ? "unknown" : peer.address().to_string() + ":" + std::to_string(peer.port());
    ++open_connections_;
    asio::co_spawn(strand, serve_connection(std::move(socket), handler_, limits_, std::move(info)),
                   [this](std::exception_ptr) { --open_connections_; });
  }
}

}  // namespace ferry::net
