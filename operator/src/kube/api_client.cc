#include "kube/api_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <future>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "base/log.h"
#include "kube/errc.h"

namespace ferry::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr auto connect_timeout = std::chrono::seconds(10);
constexpr auto request_timeout = std::chrono::seconds(30);
constexpr std::size_t max_body = 64U << 20U;
constexpr std::size_t max_idle_connections = 8;
constexpr std::size_t max_line = 16U << 20U;

std::error_code to_std(const boost::system::error_code& ec) { return ec; }

bool closed_by_peer(std::error_code e) {
  const auto is = [&e](const boost::system::error_code& b) { return e == std::error_code(b); };
  return is(http::error::end_of_stream) || is(asio::error::eof) || is(asio::error::connection_reset) ||
         is(asio::error::broken_pipe) || is(asio::ssl::error::stream_truncated);
}

bool is_write(boost::beast::http::verb method) {
  using verb = boost::beast::http::verb;
  return method == verb::post || method == verb::put || method == verb::patch || method == verb::delete_;
}

class steady_clock_source final : public clock_source {
 public:
  [[nodiscard]] time_point now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

const clock_source& clock_source::steady() {
  static const steady_clock_source source;
  return source;
}

token_bucket::token_bucket(double qps, std::size_t burst, const clock_source& clock)
    : qps_(qps),
      burst_(std::max<std::size_t>(burst, 1)),
      clock_(clock),
      tokens_(static_cast<double>(burst_)),
      refilled_(clock.now()) {}

std::chrono::nanoseconds token_bucket::reserve() {
  if (qps_ <= 0) return std::chrono::nanoseconds::zero();
  std::lock_guard lock(mutex_);
  const auto now = clock_.now();
  if (now > refilled_) {
    const std::chrono::duration<double> elapsed = now - refilled_;
    tokens_ = std::min(static_cast<double>(burst_), tokens_ + elapsed.count() * qps_);
    refilled_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::nanoseconds::zero();
  return std::chrono::ceil<std::chrono::nanoseconds>(std::chrono::duration<double>(-tokens_ / qps_));
}

struct api_client::connection {
  connection(asio::io_context& io, asio::ssl::context& tls) : stream(io, tls) {}
  beast::ssl_stream<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  bool reusable = false;
};

api_client::api_client(asio::io_context& io, const api_config& config)
    : io_(io), config_(config), tls_(asio::ssl::context::tls_client), token_(config) {}

api_client::~api_client() = default;

result<std::unique_ptr<api_client>> api_client::create(asio::io_context& io, const api_config& config) {
  auto client = std::unique_ptr<api_client>(new api_client(io, config));
  boost::system::error_code ec;
  if (!config.ca_pem.empty()) {
    client->tls_.add_certificate_authority(asio::buffer(config.ca_pem), ec);
  } else {
    client->tls_.set_default_verify_paths(ec);
  }
  if (ec) {
    FERRY_LOG(error, "kube") << "cannot load the API server's CA bundle: " << ec.message();
    return errc::bad_config;
  }
  client->tls_.set_verify_mode(config.insecure_skip_verify ? asio::ssl::verify_none : asio::ssl::verify_peer);
  // A plugin that fails now most likely always will: say so at startup.
  if (!client->token_.refresh()) return errc::bad_config;
  if (!config.client_cert_pem.empty()) {
    client->tls_.use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
    if (!ec) client->tls_.use_private_key(asio::buffer(config.client_key_pem), asio::ssl::context::pem, ec);
    if (ec) {
      FERRY_LOG(error, "kube") << "cannot load the client certificate and key: " << ec.message();
      return errc::bad_config;
    }
  }
  return client;
}

asio::awaitable<result<std::unique_ptr<api_client::connection>>> api_client::connect() {
  auto c = std::make_unique<connection>(io_, tls_);
  tcp::resolver resolver(io_);
  const auto [resolve_error, endpoints] = co_await resolver.async_resolve(config_.host, config_.port, use_tuple);
  if (resolve_error) co_return to_std(resolve_error);
  auto& tcp_layer = beast::get_lowest_layer(c->stream);
  tcp_layer.expires_after(connect_timeout);
  const auto [connect_error, endpoint] = co_await tcp_layer.async_connect(endpoints, use_tuple);
  if (connect_error) co_return to_std(connect_error);
  tcp_layer.socket().set_option(tcp::no_delay(true));

  // Verify the certificate against the name or address we dialled.
  SSL* ssl = c->stream.native_handle();
  boost::system::error_code not_an_address;
  asio::ip::make_address(config_.host, not_an_address);
  if (not_an_address) {
    SSL_set_tlsext_host_name(ssl, config_.host.c_str());
    SSL_set1_host(ssl, config_.host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), config_.host.c_str());
  }
  const auto [handshake_error] = co_await c->stream.async_handshake(asio::ssl::stream_base::client, use_tuple);
  if (handshake_error) {
    FERRY_LOG_LIMITED(warn, "kube", 10'000)
        << "TLS handshake with " << config_.host << ":" << config_.port << " failed: " << handshake_error.message();
    co_return to_std(handshake_error);
  }
  tcp_layer.expires_never();
  co_return c;
}

asio::awaitable<result<http_response>> api_client::exchange(connection& c, verb method, const std::string& target,
                                                            const std::string& body, std::string_view content_type) {
  http::request<http::string_body> request{method, target, 11};
  request.set(http::field::host, config_.host);
  request.set(http::field::user_agent, "ferry-operator");
  request.set(http::field::accept, "application/json");
  if (const auto token = token_.current(); !token.empty()) request.set(http::field::authorization, "Bearer " + token);
  if (method == verb::post || method == verb::put || method == verb::patch) {
    request.set(http::field::content_type, content_type);
    request.body() = body;
  }
  request.keep_alive(true);
  request.prepare_payload();

  auto& tcp_layer = beast::get_lowest_layer(c.stream);
  tcp_layer.expires_after(request_timeout);
  const auto [write_error, written] = co_await http::async_write(c.stream, request, use_tuple);
  if (write_error) co_return to_std(write_error);
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body);
  const auto [read_error, read] = co_await http::async_read(c.stream, c.buffer, parser, use_tuple);
  if (read_error) co_return to_std(read_error);
  tcp_layer.expires_never();
  c.reusable = parser.keep_alive();
  auto response = parser.release();
  co_return http_response{response.result_int(), std::move(response.body())};
}

void api_client::limit_writes(double qps, std::size_t burst) {
  writes_ = qps > 0 ? std::make_unique<token_bucket>(qps, burst) : nullptr;
}

std::chrono::nanoseconds api_client::admit(verb method, const std::string& target) {
  if (!writes_ || !is_write(method) || target.starts_with("/apis/coordination.k8s.io/")) {
    return std::chrono::nanoseconds::zero();
  }
  const auto wait = writes_->reserve();
  if (throttled_) throttled_(wait);
  return wait;
}

asio::awaitable<result<http_response>> api_client::async_send(verb method, std::string target, std::string body,
                                                              std::string_view content_type) {
  if (const auto wait = admit(method, target); wait.count() > 0) {
    asio::steady_timer timer(io_, wait);
    co_await timer.async_wait(use_tuple);
  }
  co_return co_await send_now(method, std::move(target), std::move(body), std::string(content_type));
}

void api_client::use_renewed_certificate() {
  const auto renewed = token_.renewed_certificate();
  if (!renewed) return;
  boost::system::error_code ec;
  tls_.use_certificate_chain(asio::buffer(renewed->first), ec);
  if (!ec) tls_.use_private_key(asio::buffer(renewed->second), asio::ssl::context::pem, ec);
  if (ec) {
    FERRY_LOG(error, "kube") << "cannot load the client certificate and key from the exec plugin: " << ec.message();
    return;
  }
  idle_.clear();  // they present the old certificate
}

asio::awaitable<result<http_response>> api_client::send_now(verb method, std::string target, std::string body,
                                                            std::string content_type) {
  auto answer = co_await send_once(method, target, body, content_type);
  // An exec plugin's credential can be revoked or expire early: the plugin runs again and the request is retried.
  if (answer && answer.value().status == 401 && token_.unauthorized())
    answer = co_await send_once(method, target, body, content_type);
  co_return answer;
}

asio::awaitable<result<http_response>> api_client::send_once(verb method, const std::string& target,
                                                             const std::string& body, const std::string& content_type) {
  use_renewed_certificate();
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<connection> c;
    const bool reused = attempt == 0 && !idle_.empty();
    if (reused) {
      c = std::move(idle_.back());
      idle_.pop_back();
    } else {
      auto made = co_await connect();
      if (!made) co_return made.error();
      c = std::move(made).value();
    }
    auto answer = co_await exchange(*c, method, target, body, content_type);
    if (observer_ && (answer || !reused || !closed_by_peer(answer.error()))) {
      observer_(method, answer ? answer.value().status : 0);
    }
    if (answer) {
      if (c->reusable && idle_.size() < max_idle_connections) idle_.push_back(std::move(c));
      co_return answer;
    }
    // The server may have closed an idle connection just as we reused it: that, and only that, is retried once,
    // on a new connection (a timeout may mean the server acted on the request).
    if (!reused || !closed_by_peer(answer.error())) co_return answer;
  }
}

result<http_response> api_client::send(verb method, std::string target, std::string body,
                                       std::string_view content_type) {
  // A write waits for its token here, on the caller's thread: workers slow down, the io_context does not.
  if (const auto wait = admit(method, target); wait.count() > 0) std::this_thread::sleep_for(wait);
  auto promise = std::make_shared<std::promise<result<http_response>>>();
  auto answer = promise->get_future();
  asio::co_spawn(
      io_,
      [this, promise, method, target = std::move(target), body = std::move(body),
       content_type = std::string(content_type)]() mutable -> asio::awaitable<void> {
        promise->set_value(co_await send_now(method, std::move(target), std::move(body), std::move(content_type)));
      },
      asio::detached);
  // Each step has its own timeout; this only guards against an io_context that stopped.
  if (answer.wait_for(2 * (connect_timeout + request_timeout)) != std::future_status::ready) return errc::timeout;
  return answer.get();
}

asio::awaitable<result<http_response>> api_client::async_stream(std::string target, line_handler on_line,
                                                                std::chrono::seconds idle_timeout) {
  use_renewed_certificate();
  auto made = co_await connect();
  if (!made) co_return made.error();
  auto& c = *made.value();
  http::request<http::empty_body> request{verb::get, target, 11};
  request.set(http::field::host, config_.host);
  request.set(http::field::user_agent, "ferry-operator");
  request.set(http::field::accept, "application/json");
  if (const auto token = token_.current(); !token.empty()) request.set(http::field::authorization, "Bearer " + token);
  auto& tcp_layer = beast::get_lowest_layer(c.stream);
  tcp_layer.expires_after(request_timeout);
  const auto [write_error, written] = co_await http::async_write(c.stream, request, use_tuple);
  if (write_error) co_return to_std(write_error);

  http::response_parser<http::empty_body> header_parser;
  header_parser.body_limit(boost::none);
  const auto [header_error, header_read] =
      co_await http::async_read_header(c.stream, c.buffer, header_parser, use_tuple);
  if (header_error) co_return to_std(header_error);
  const unsigned status = header_parser.get().result_int();
  if (status == 401) token_.unauthorized();  // the watch is started again, with the plugin's new credential
  if (status != 200) {
    http::response_parser<http::string_body> parser(std::move(header_parser));
    parser.body_limit(max_body);
    const auto [read_error, read] = co_await http::async_read(c.stream, c.buffer, parser, use_tuple);
    if (read_error) co_return to_std(read_error);
    co_return http_response{status, std::move(parser.get().body())};
  }

  http::response_parser<http::buffer_body> parser(std::move(header_parser));
  std::array<char, 16384> chunk{};
  std::string pending;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    tcp_layer.expires_after(idle_timeout);
    const auto [read_error, read] = co_await http::async_read_some(c.stream, c.buffer, parser, use_tuple);
    if (read_error && read_error != http::error::need_buffer) co_return to_std(read_error);
    pending.append(chunk.data(), chunk.size() - parser.get().body().size);
    std::size_t start = 0;
    for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n', start)) {
      if (end > start && !on_line(std::string_view(pending).substr(start, end - start))) {
        co_return http_response{status, {}};
      }
      start = end + 1;
    }
    pending.erase(0, start);
    if (pending.size() > max_line) co_return make_error_code(errc::bad_response);
  }
  if (!pending.empty()) on_line(pending);
  co_return http_response{status, {}};
}

}  // namespace ferry::kube
