#include "net/peer_client.h"

#include <openssl/ssl.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "protocol/error_code.h"
#include "protocol/header.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"

namespace ferry::net {
namespace asio = boost::asio;
namespace p = protocol;

namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);
// The SASL versions the broker's own logins use: Kafka's since 2.2 (session lifetimes are reported in v1).
constexpr std::int16_t handshake_version = 1;
constexpr std::int16_t authenticate_version = 1;
constexpr std::int32_t max_login_response_bytes = 64 * 1024;

std::error_code to_std(const boost::system::error_code& ec) { return {ec.value(), std::system_category()}; }

// Closes the client when the deadline passes first.
class call_deadline {
 public:
  call_deadline(asio::io_context& io, peer_client& client, std::chrono::milliseconds timeout, const char* what)
      : timer_(io) {
    timer_.expires_after(timeout);
    timer_.async_wait(guarded(what, [&client](const boost::system::error_code& ec) {
      if (!ec) client.close();
    }));
  }
  ~call_deadline() { timer_.cancel(); }
  call_deadline(const call_deadline&) = delete;
  call_deadline& operator=(const call_deadline&) = delete;

 private:
  asio::steady_timer timer_;
};

}  // namespace

void peer_client::close() {
  boost::system::error_code ignored;
  lowest_layer().close(ignored);
}

asio::awaitable<result<void>> peer_client::connect(const std::string& host, std::uint16_t port,
                                                   std::chrono::milliseconds timeout) {
  asio::ip::tcp::resolver resolver(io_);
  const auto [resolve_error, endpoints] =
      co_await resolver.async_resolve(host, std::to_string(port), asio::as_tuple(asio::use_awaitable));
  if (resolve_error) co_return to_std(resolve_error);
  tls_.reset();
  socket_ = asio::ip::tcp::socket(io_);
  const call_deadline deadline(io_, *this, timeout, "a peer connection's connect deadline");
  const auto [connect_error, endpoint] = co_await asio::async_connect(socket_, endpoints, no_throw);
  if (connect_error) {
    close();
    co_return to_std(connect_error);
  }
  socket_.set_option(asio::ip::tcp::no_delay(true));
  if (security_ == nullptr) co_return success();
  if (security_->tls) {
    if (auto secured = co_await secure(host); !secured) {
      close();
      co_return secured.error();
    }
  }
  if (!security_->sasl_mechanism.empty()) {
    if (auto logged_in = co_await login(); !logged_in) {
      close();
      co_return logged_in.error();
    }
  }
  co_return success();
}

asio::awaitable<result<void>> peer_client::secure(const std::string& host) {
  tls_context_ = security_->tls();
  tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(std::move(socket_), *tls_context_);
  socket_ = asio::ip::tcp::socket(io_);
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  const bool dialled_a_name = static_cast<bool>(ec);
  // SNI only for names, as Kafka's clients send it; the certificate is checked against names and addresses.
  if (dialled_a_name) SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str());
  tls_->set_verify_mode(asio::ssl::verify_peer);
  if (security_->verify_host) tls_->set_verify_callback(asio::ssl::host_name_verification(host));
  const auto [handshake_error] = co_await tls_->async_handshake(asio::ssl::stream_base::client, no_throw);
  if (handshake_error) {
    FERRY_LOG_LIMITED(warn, "net", 10000)
        << "TLS handshake with broker " << host << " failed: " << handshake_error.message();
    // Boost's own conversion keeps the SSL category, whose message says what failed ("certificate verify failed").
    co_return std::error_code(handshake_error);
  }
  co_return success();
}

asio::awaitable<result<void>> peer_client::login() {
  const auto protocol_error = std::make_error_code(std::errc::protocol_error);
  const auto permission_denied = std::make_error_code(std::errc::permission_denied);
  std::vector<std::byte> body;
  const auto send = [this, &body](std::int16_t api_key, std::int16_t version, const auto& request,
                                  bool flexible) -> asio::awaitable<result<void>> {
    p::output_buffer out;
    p::begin_request_frame(out, {api_key, version, ++correlation_id_, security_->client_id}, flexible);
    p::writer w(out);
    request.encode(w, version);
    p::finish_frame(out);
    const auto frame = out.flatten();
    if (tls_) co_return co_await exchange(*tls_, frame, max_login_response_bytes, body);
    co_return co_await exchange(socket_, frame, max_login_response_bytes, body);
  };

  p::sasl_handshake_request handshake;
  handshake.mechanism = security_->sasl_mechanism;
  if (auto sent = co_await send(p::sasl_handshake_request::api_key, handshake_version, handshake, false); !sent)
    co_return sent.error();
  p::reader hr(body);
  std::int32_t correlation_id = 0;
  p::sasl_handshake_response handshake_response;
  if (!p::decode_response_header(hr, correlation_id, false) || correlation_id != correlation_id_ ||
      !handshake_response.decode(hr, handshake_version))
    co_return protocol_error;
  if (handshake_response.error_code != 0) {
    FERRY_LOG_LIMITED(error, "net", 10000) << "the peer broker does not accept SASL mechanism "
                                           << security_->sasl_mechanism << " (" << security_->mechanism_setting << ")";
    co_return permission_denied;
  }

  auto client = security_->sasl_exchange();
  std::optional<std::string> token = client->first_token();
  while (token) {
    p::sasl_authenticate_request request;
    request.auth_bytes.assign(reinterpret_cast<const std::byte*>(token->data()),
                              reinterpret_cast<const std::byte*>(token->data() + token->size()));
    if (auto sent = co_await send(p::sasl_authenticate_request::api_key, authenticate_version, request, false); !sent)
      co_return sent.error();
    p::reader r(body);
    p::sasl_authenticate_response response;
    if (!p::decode_response_header(r, correlation_id, false) || correlation_id != correlation_id_ ||
        !response.decode(r, authenticate_version))
      co_return protocol_error;
    if (response.error_code != 0) {
      FERRY_LOG_LIMITED(error, "net", 10000) << "the peer broker refused the SASL login of " << security_->login_setting
                                             << ": " << response.error_message.value_or("no message");
      co_return permission_denied;
    }
    const std::string_view server_token(reinterpret_cast<const char*>(response.auth_bytes.data()),
                                        response.auth_bytes.size());
    auto next = client->respond(server_token);
    if (!next) co_return next.error();
    token = std::move(next.value());
  }
  co_return success();
}

template <typename Stream>
asio::awaitable<result<void>> peer_client::exchange(Stream& stream, std::span<const std::byte> frame,
                                                    std::int32_t max_bytes, std::vector<std::byte>& body) {
  const auto [write_error, written] =
      co_await asio::async_write(stream, asio::buffer(frame.data(), frame.size()), no_throw);
  if (write_error) co_return to_std(write_error);
  std::int32_t size = 0;
  const auto [size_error, got] = co_await asio::async_read(stream, asio::buffer(&size, sizeof size), no_throw);
  if (size_error) co_return to_std(size_error);
  size = boost::endian::big_to_native(size);
  if (size < 4 || size > max_bytes) co_return std::make_error_code(std::errc::protocol_error);
  body.resize(static_cast<std::size_t>(size));
  const auto [body_error, read] = co_await asio::async_read(stream, asio::buffer(body), no_throw);
  if (body_error) co_return to_std(body_error);
  co_return success();
}

asio::awaitable<result<void>> peer_client::round_trip(std::span<const std::byte> frame,
                                                      std::chrono::milliseconds timeout, std::int32_t max_bytes,
                                                      std::vector<std::byte>& body) {
  const call_deadline deadline(io_, *this, timeout, "a peer request's deadline");
  if (tls_) co_return co_await exchange(*tls_, frame, max_bytes, body);
  co_return co_await exchange(socket_, frame, max_bytes, body);
}

}  // namespace ferry::net
