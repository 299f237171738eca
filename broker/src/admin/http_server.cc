#include "admin/http_server.h"

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
  const http_handler& handler;
  const http_server_options& options;
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
std::optional<http_reply> refusal(const authentication& decision, const http_server_options& options) {
  if (decision.result == authentication::outcome::allowed) return std::nullopt;
  if (decision.result == authentication::outcome::busy)
    return options.error_reply(503, "too many logins are being checked; try again shortly");
  return options.error_reply(401, "authentication required");
}

template <typename Stream>
asio::awaitable<bool> write_reply(Stream& stream, const http_reply& reply, unsigned version, bool keep_alive,
                                  bool challenge) {
  http::response<http::string_body> response{static_cast<http::status>(reply.status), version};
  response.set(http::field::server, "ferry");
  response.set(http::field::content_type, reply.content_type);
  if (reply.status == 401 && challenge)
    response.set(http::field::www_authenticate, R"(Basic realm="ferry", charset="UTF-8")");
  response.keep_alive(keep_alive);
  response.body() = reply.body;
  response.prepare_payload();
  beast::get_lowest_layer(stream).expires_after(request_timeout);
  auto [write_ec, m] = co_await http::async_write(stream, response, no_throw);
  co_return !write_ec && response.keep_alive();
}

template <typename Stream>
asio::awaitable<void> serve_requests(Stream& stream, const connection& c) {
  beast::flat_buffer buffer;
  const bool challenge = c.auth != nullptr && c.auth->challenges_basic();
  for (;;) {
    beast::get_lowest_layer(stream).expires_after(request_timeout);
    http::request_parser<http::string_body> parser;
    parser.header_limit(std::uint32_t{16} * 1024);
    parser.body_limit(c.options.max_body_bytes);
    auto [read_ec, n] = co_await http::async_read(stream, buffer, parser, no_throw);
    if (read_ec == http::error::body_limit) {
      // Answered, then closed: the rest of the body is never read.
      co_await write_reply(stream,
                           c.options.error_reply(413, "the request body is larger than " +
                                                          std::to_string(c.options.max_body_bytes) + " bytes"),
                           parser.get().version(), false, challenge);
      break;
    }
    if (read_ec) break;
    auto& request = parser.get();
    http_request incoming{std::string(request.method_string()),
                          std::string(request.target()),
                          std::move(request.body()),
                          {},
                          request["Ferry-Forwarded"] == "true"};
    std::optional<http_reply> refused;
    if (c.auth != nullptr && c.auth->protects(path_of(incoming.target))) {
      const auto decision = co_await c.auth->authenticate(
          {.authorization = request[http::field::authorization], .certificate = c.certificate, .client = c.client});
      if (decision.failed_login) {
        // The connection's own timer, so a guessing client waits without holding a thread.
        asio::steady_timer delay(stream.get_executor(), c.failed_login_delay);
        co_await delay.async_wait(no_throw);
      }
      refused = refusal(decision, c.options);
      incoming.principal = decision.principal;
    }
    // Not a conditional expression: GCC 12 destroys the temporaries of a co_await inside one too early.
    http_reply reply;
    if (refused)
      reply = std::move(*refused);
    else
      reply = co_await c.handler(std::move(incoming));
    const bool keep_alive = request.keep_alive();
    if (!co_await write_reply(stream, reply, request.version(), keep_alive, challenge)) break;
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
        << c.options.name << " TLS handshake with " << c.client << " failed: " << ec.message();
    co_return;
  }
  if (SSL_get_verify_result(stream.native_handle()) == X509_V_OK)
    c.certificate = SSL_get0_peer_certificate(stream.native_handle());
  co_await serve_requests(stream, c);
  beast::get_lowest_layer(stream).expires_after(tls_shutdown_timeout);
  co_await stream.async_shutdown(no_throw);
}

}  // namespace

security::tls_result<admin_access> admin_access::create(const config::http_security& settings,
                                                        const security::credential_source& users,
                                                        security::password_checker& checker,
                                                        prometheus::Registry& registry,
                                                        std::chrono::milliseconds failed_login_delay,
                                                        const authenticator_names& names) {
  admin_access access;
  access.failed_login_delay = failed_login_delay;
  if (settings.https) {
    auto tls = security::tls_context_source::create(settings.tls, names.setting_prefix);
    if (!tls) return tls.error();
    access.tls = std::move(tls).value();
  }
  if (settings.authenticates()) {
    auto auth = authenticator::create(settings, users, checker, registry, names);
    if (!auth) return auth.error();
    access.auth = std::move(auth).value();
  }
  return access;
}

http_server::http_server(asio::io_context& io, http_handler handler, admin_access access, http_server_options options)
    : io_(io), handler_(std::move(handler)), options_(std::move(options)), access_(std::move(access)), acceptor_(io) {}

result<void> http_server::listen(const std::string& host, std::uint16_t port) {
  FERRY_TRY(bound_port_, net::open_listener(acceptor_, host, port));
  return success();
}

void http_server::start() {
  asio::co_spawn(
      acceptor_.get_executor(),
      [this]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, socket] = co_await acceptor_.async_accept(asio::make_strand(io_), no_throw);
          if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
          if (ec) continue;
          auto executor = socket.get_executor();
          connection c{handler_, options_, access_.auth.get(), access_.failed_login_delay, address_of(socket)};
          beast::tcp_stream stream(std::move(socket));
          if (access_.tls)
            asio::co_spawn(executor, serve_https(std::move(stream), access_.tls->current(), std::move(c)),
                           guarded_detached(options_.name + " connection"));
          else
            asio::co_spawn(executor, serve_http(std::move(stream), std::move(c)),
                           guarded_detached(options_.name + " connection"));
        }
      },
      guarded_detached(options_.name + "'s accept loop"));
}

void http_server::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void http_server::reload_changed_files() {
  if (access_.tls) access_.tls->check_files();
}

}  // namespace ferry::admin
