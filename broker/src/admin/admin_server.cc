#include "admin/admin_server.h"

#include <openssl/ssl.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "net/listen.h"

namespace ferry::admin {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);
constexpr auto request_timeout = std::chrono::seconds(30);
constexpr auto tls_shutdown_timeout = std::chrono::seconds(5);

// What a connection's requests share.
struct connection {
  const admin_sources& sources;
  authenticator* auth;  // none: every path is open
  std::chrono::milliseconds failed_login_delay;
  std::string client;                 // host:port
  const X509* certificate = nullptr;  // the verified client certificate, over TLS
};

template <typename Socket>
std::string address_of(const Socket& socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  return ec ? std::string("unknown") : peer.address().to_string() + ":" + std::to_string(peer.port());
}

// The answer to a request the authenticator did not allow; none when it did.
std::optional<http_reply> refusal(const authentication& decision) {
  if (decision.result == authentication::outcome::allowed) return std::nullopt;
  if (decision.result == authentication::outcome::busy)
    return error_reply(503, "too many logins are being checked; try again shortly");
  return error_reply(401, "authentication required");
}

template <typename Stream>
asio::awaitable<void> serve_requests(Stream& stream, const connection& c) {
  beast::flat_buffer buffer;
  for (;;) {
    beast::get_lowest_layer(stream).expires_after(request_timeout);
    http::request_parser<http::string_body> parser;  // bodies are read (capped) and ignored
    parser.header_limit(std::uint32_t{16} * 1024);
    parser.body_limit(std::uint64_t{1024} * 1024);
    auto [read_ec, n] = co_await http::async_read(stream, buffer, parser, no_throw);
    if (read_ec) break;
    const auto& request = parser.get();
    const std::string target(request.target());
    std::optional<http_reply> refused;
    if (c.auth != nullptr && c.auth->protects(path_of(target))) {
      const auto decision = co_await c.auth->authenticate(
          {.authorization = request[http::field::authorization], .certificate = c.certificate, .client = c.client});
      if (decision.failed_login) {
        // The connection's own timer, so a guessing client waits without holding a thread.
        asio::steady_timer delay(stream.get_executor(), c.failed_login_delay);
        co_await delay.async_wait(no_throw);
      }
      refused = refusal(decision);
    }
    const http_reply reply = refused ? *refused : route(c.sources, std::string(request.method_string()), target);
    http::response<http::string_body> response{static_cast<http::status>(reply.status), request.version()};
    response.set(http::field::server, "ferry");
    response.set(http::field::content_type, reply.content_type);
    if (reply.status == 401 && c.auth != nullptr && c.auth->challenges_basic())
      response.set(http::field::www_authenticate, R"(Basic realm="ferry", charset="UTF-8")");
    response.keep_alive(request.keep_alive());
    response.body() = reply.body;
    response.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(request_timeout);
    auto [write_ec, m] = co_await http::async_write(stream, response, no_throw);
    if (write_ec || !response.keep_alive()) break;
  }
}

asio::awaitable<void> serve_http(beast::tcp_stream stream, connection c) {
  co_await serve_requests(stream, c);
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

// `context` is held for the connection's life: a renewal affects only connections accepted after it.
asio::awaitable<void> serve_https(beast::tcp_stream tcp, std::shared_ptr<asio::ssl::context> context, connection c) {
  beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp), *context);
  beast::get_lowest_layer(stream).expires_after(request_timeout);
  if (auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, no_throw); ec) {
    FERRY_LOG_LIMITED(info, "admin", 1000)
        << "admin API TLS handshake with " << c.client << " failed: " << ec.message();
    co_return;
  }
  if (SSL_get_verify_result(stream.native_handle()) == X509_V_OK)
    c.certificate = SSL_get0_peer_certificate(stream.native_handle());
  co_await serve_requests(stream, c);
  beast::get_lowest_layer(stream).expires_after(tls_shutdown_timeout);
  co_await stream.async_shutdown(no_throw);
}

}  // namespace

security::tls_result<admin_access> admin_access::create(const config::admin_api_security& settings,
                                                        const security::credential_source& users,
                                                        security::password_checker& checker,
                                                        prometheus::Registry& registry,
                                                        std::chrono::milliseconds failed_login_delay) {
  admin_access access;
  access.failed_login_delay = failed_login_delay;
  if (settings.https) {
    auto tls = security::tls_context_source::create(settings.tls, "admin.");
    if (!tls) return tls.error();
    access.tls = std::move(tls).value();
  }
  if (settings.authenticates()) {
    auto auth = authenticator::create(settings, users, checker, registry);
    if (!auth) return auth.error();
    access.auth = std::move(auth).value();
  }
  return access;
}

admin_server::admin_server(asio::io_context& io, admin_sources sources, admin_access access)
    : io_(io), sources_(std::move(sources)), access_(std::move(access)), acceptor_(io) {}

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
          connection c{sources_, access_.auth.get(), access_.failed_login_delay, address_of(socket)};
          beast::tcp_stream stream(std::move(socket));
          if (access_.tls)
            asio::co_spawn(executor, serve_https(std::move(stream), access_.tls->current(), std::move(c)),
                           guarded_detached("an admin API connection"));
          else
            asio::co_spawn(executor, serve_http(std::move(stream), std::move(c)),
                           guarded_detached("an admin API connection"));
        }
      },
      guarded_detached("the admin API's accept loop"));
}

void admin_server::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void admin_server::reload_changed_files() {
  if (access_.tls) access_.tls->check_files();
}

}  // namespace ferry::admin
