#include "admin/admin_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "net/listen.h"

namespace ferry::admin {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);

asio::awaitable<void> serve(beast::tcp_stream stream, const admin_sources& sources) {
  beast::flat_buffer buffer;
  for (;;) {
    stream.expires_after(std::chrono::seconds(30));
    http::request_parser<http::string_body> parser;  // bodies are read (capped) and ignored
    parser.header_limit(std::uint32_t{16} * 1024);
    parser.body_limit(std::uint64_t{1024} * 1024);
    auto [read_ec, n] = co_await http::async_read(stream, buffer, parser, no_throw);
    if (read_ec) break;
    const auto& request = parser.get();
    const http_reply reply = route(sources, std::string(request.method_string()), std::string(request.target()));
    http::response<http::string_body> response{static_cast<http::status>(reply.status), request.version()};
    response.set(http::field::server, "ferry");
    response.set(http::field::content_type, reply.content_type);
    response.keep_alive(request.keep_alive());
    response.body() = reply.body;
    response.prepare_payload();
    auto [write_ec, m] = co_await http::async_write(stream, response, no_throw);
    if (write_ec || !response.keep_alive()) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace

admin_server::admin_server(asio::io_context& io, admin_sources sources)
    : io_(io), sources_(std::move(sources)), acceptor_(io) {}

result<void> admin_server::listen(const std::string& host, std::uint16_t port) {
  FERRY_TRY(bound_port_, net::open_listener(acceptor_, host, port));
  return success();
}

void admin_server::start() {
  asio::co_spawn(
      acceptor_.get_executor(),
      [this]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, socket] = co_await acceptor_.async_accept(asio::make_strand(io_), no_throw);
          if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
          if (ec) continue;
          auto executor = socket.get_executor();
          asio::co_spawn(executor, serve(beast::tcp_stream(std::move(socket)), sources_),
                         guarded_detached("an admin API connection"));
        }
      },
      guarded_detached("the admin API's accept loop"));
}

void admin_server::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

}  // namespace ferry::admin
