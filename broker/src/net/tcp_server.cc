#include "net/tcp_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "net/busy_time.h"
#include "net/host_address.h"
#include "net/listen.h"

namespace ferry::net {
namespace asio = boost::asio;

tcp_server::tcp_server(io_context_pool& pool, request_handler& handler, std::string listener, connection_limits limits,
                       connection_security security, std::function<void()> on_accept_error)
    : pool_(pool),
      handler_(handler),
      listener_(std::move(listener)),
      limits_(std::move(limits)),
      security_(std::move(security)),
      acceptor_(pool.main()),
      on_accept_error_(std::move(on_accept_error)) {}

result<void> tcp_server::listen(const std::string& host, std::uint16_t port) {
  FERRY_TRY(bound_port_, net::open_listener(acceptor_, host, port));
  return success();
}

void tcp_server::start() {
  asio::co_spawn(acceptor_.get_executor(), accept_loop(), guarded_detached("the accept loop of " + listener_));
}

void tcp_server::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> tcp_server::accept_loop() {
  asio::steady_timer backoff(acceptor_.get_executor());
  auto pause = min_accept_backoff;
  for (;;) {
    auto& home = pool_.next();
    auto [ec, socket] = co_await acceptor_.async_accept(home, asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) {
      // Out of descriptors and the like: keep serving the connections we have. Retrying at once would spin
      // (the pending connection stays in the backlog and fails the same way), so wait, longer each time.
      ++accept_errors_;
      if (on_accept_error_) on_accept_error_();
      FERRY_LOG_LIMITED(warn, "net", 5000)
          << "accept failed: " << ec.message() << "; retrying in " << pause.count() << " ms";
      backoff.expires_after(pause);
      auto [wait_ec] = co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
      if (wait_ec || !acceptor_.is_open()) co_return;
      pause = std::min(pause * 2, max_accept_backoff);
      continue;
    }
    pause = min_accept_backoff;
    connection_info info;
    info.id = next_connection_id_++;
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    info.peer = peer_ec ? "unknown" : peer.address().to_string() + ":" + std::to_string(peer.port());
    info.host = peer_ec ? "unknown" : java_host_address(peer.address());
    info.executor = home.get_executor();
    info.listener = listener_;
    // The connection's work is timed for the request quota; its executor keeps the meter alive.
    auto meter = std::make_shared<busy_meter>();
    info.busy_time = meter.get();
    ++open_connections_;
    asio::co_spawn(metered_executor(home.get_executor(), std::move(meter)),
                   serve_connection(std::move(socket), handler_, limits_, security_, std::move(info)),
                   guarded_detached("a connection", [this] { --open_connections_; }));
  }
}

}  // namespace ferry::net
