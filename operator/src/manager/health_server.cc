#include "manager/health_server.h"

#include <prometheus/text_serializer.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "base/guarded.h"
#include "base/log.h"

namespace ferry::manager {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

}  // namespace

result<std::unique_ptr<health_server>> health_server::start(const std::string& address, std::uint16_t port,
                                                            std::shared_ptr<prometheus::Registry> registry,
                                                            std::function<std::string()> not_ready) {
  std::unique_ptr<health_server> server(new health_server());
  server->registry_ = std::move(registry);
  server->not_ready_ = std::move(not_ready);
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) {
    FERRY_LOG(error, "manager") << "--http-address '" << address << "' is not an IP address";
    return std::error_code(ec);
  }
  server->acceptor_ = std::make_unique<tcp::acceptor>(server->io_);
  const tcp::endpoint endpoint(ip, port);
  server->acceptor_->open(endpoint.protocol(), ec);
  if (!ec) server->acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) server->acceptor_->bind(endpoint, ec);
  if (!ec) server->acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    FERRY_LOG(error, "manager") << "cannot listen on " << address << ":" << port
                                << " (--http-address): " << ec.message();
    return std::error_code(ec);
  }
  server->port_ = server->acceptor_->local_endpoint().port();
  asio::co_spawn(server->io_, server->accept(), guarded_detached("the HTTP port's accept loop"));
  server->thread_ = std::thread([s = server.get()] { s->io_.run(); });
  return server;
}

health_server::~health_server() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

asio::awaitable<void> health_server::accept() {
  for (;;) {
    auto [accept_error, socket] = co_await acceptor_->async_accept(use_tuple);
    if (accept_error == asio::error::operation_aborted) co_return;
    if (accept_error) continue;  // e.g. out of file descriptors for a moment: the next accept may succeed
    // Bounded: beyond the cap a client is turned away at once rather than queued behind the others.
    if (connections_ >= max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    ++connections_;
    asio::co_spawn(io_, serve(std::move(socket)), guarded_detached("an HTTP connection", [this] { --connections_; }));
  }
}

asio::awaitable<void> health_server::serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    // Each connection has its own coroutine, so a slow or silent client only holds itself up.
    stream.expires_after(read_timeout);
    http::request<http::string_body> request;
    auto [read_error, read] = co_await http::async_read(stream, buffer, request, use_tuple);
    if (read_error) co_return;
    http::response<http::string_body> response{http::status::ok, request.version()};
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    const auto target = std::string(request.target().substr(0, request.target().find('?')));
    if (target == "/metrics") {
      response.set(http::field::content_type, "text/plain; version=0.0.4");
      response.body() = prometheus::TextSerializer().Serialize(registry_->Collect());
    } else if (target == "/healthz") {
      response.body() = "ok\n";
    } else if (target == "/readyz") {
      const auto why = not_ready_();
      if (!why.empty()) response.result(http::status::service_unavailable);
      response.body() = why.empty() ? "ok\n" : why + "\n";
    } else {
      response.result(http::status::not_found);
      response.body() = "not found: try /metrics, /healthz or /readyz\n";
    }
    response.keep_alive(request.keep_alive());
    response.prepare_payload();
    stream.expires_after(read_timeout);
    auto [write_error, written] = co_await http::async_write(stream, response, use_tuple);
    if (write_error || !response.keep_alive()) co_return;
  }
}

}  // namespace ferry::manager
