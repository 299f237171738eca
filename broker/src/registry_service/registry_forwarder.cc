#include "registry_service/registry_forwarder.h"

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <charconv>
#include <optional>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace ferry::registry_service {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);

struct parsed_url {
  bool https = false;
  std::string host;
  std::string port;
};

std::optional<parsed_url> parse_url(std::string_view url) {
  parsed_url out;
  if (url.starts_with("https://")) {
    out.https = true;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    return std::nullopt;
  }
  url = url.substr(0, url.find('/'));
  const auto colon = url.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == url.size()) return std::nullopt;
  auto host = url.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  out.host = std::string(host);
  out.port = std::string(url.substr(colon + 1));
  return out;
}

std::string base64(const std::string& text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  const auto n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                 reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

registry::registry_reply failed(const std::string& url, const std::string& why) {
  return registry::error_reply(registry::error_codes::forwarding_failed,
                               "Error while forwarding the request to the leader's registry at " + url + ": " + why);
}

template <typename Stream>
asio::awaitable<std::optional<registry::registry_reply>> exchange(Stream& stream,
                                                                  const http::request<http::string_body>& request,
                                                                  std::uint64_t max_body, std::string& why) {
  if (auto [ec, n] = co_await http::async_write(stream, request, no_throw); ec) {
    why = ec.message();
    co_return std::nullopt;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body);
  if (auto [ec, n] = co_await http::async_read(stream, buffer, parser, no_throw); ec) {
    why = ec.message();
    co_return std::nullopt;
  }
  co_return registry::registry_reply{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

}  // namespace

asio::awaitable<registry::registry_reply> registry_forwarder::forward(const std::string& url,
                                                                      const registry::registry_request& request) const {
  const auto target = parse_url(url);
  if (!target) co_return failed(url, "not an http(s)://host:port URL");
  const auto executor = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(executor);
  auto [resolve_ec, endpoints] = co_await resolver.async_resolve(target->host, target->port, no_throw);
  if (resolve_ec) co_return failed(url, resolve_ec.message());
  beast::tcp_stream tcp(executor);
  tcp.expires_after(settings_.timeout);
  if (auto [ec, e] = co_await tcp.async_connect(endpoints, no_throw); ec) co_return failed(url, ec.message());

  http::request<http::string_body> out{http::string_to_verb(request.method), request.target, 11};
  out.set(http::field::host, target->host + ":" + target->port);
  out.set(http::field::content_type, registry::content_type);
  out.set(http::field::accept, registry::content_type);
  out.set(forwarded_header, "true");
  if (!settings_.basic_user.empty())
    out.set(http::field::authorization, "Basic " + base64(settings_.basic_user + ":" + settings_.basic_password));
  out.body() = request.body;
  out.prepare_payload();
  out.keep_alive(false);

  std::string why;
  std::optional<registry::registry_reply> reply;
  if (target->https) {
    const auto context = settings_.tls ? settings_.tls() : nullptr;
    if (!context) co_return failed(url, "the leader serves https and this broker has no TLS client settings");
    beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp), *context);
    SSL_set_tlsext_host_name(tls.native_handle(), target->host.c_str());
    tls.set_verify_mode(asio::ssl::verify_peer);
    if (settings_.verify_host) tls.set_verify_callback(asio::ssl::host_name_verification(target->host));
    if (auto [ec] = co_await tls.async_handshake(asio::ssl::stream_base::client, no_throw); ec)
      co_return failed(url, "TLS handshake: " + ec.message());
    reply = co_await exchange(tls, out, settings_.max_response_bytes, why);
  } else {
    reply = co_await exchange(tcp, out, settings_.max_response_bytes, why);
  }
  if (!reply) co_return failed(url, why);
  co_return *reply;
}

}  // namespace ferry::registry_service
