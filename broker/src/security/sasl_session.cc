#include "security/sasl_session.h"

#include <algorithm>
#include <cstring>

#include <boost/endian/conversion.hpp>

#include "base/log.h"
#include "protocol/api_table.h"
#include "protocol/error_code.h"

namespace ferry::security {
namespace asio = boost::asio;
namespace p = protocol;
using net::request_outcome;

namespace {

constexpr auto unsupported_sasl_mechanism = p::error_code::unsupported_sasl_mechanism;
constexpr auto sasl_authentication_failed = p::error_code::sasl_authentication_failed;

// Kafka's clients read only the code; the text says no more than that the login failed, so a client cannot
// tell an unknown user from a wrong password.
constexpr std::string_view failed_authentication_message = "Authentication failed: invalid user name or password";
// Kafka lets a client re-authenticate at most once a second (KafkaChannel's MIN_REAUTH_INTERVAL_ONE_SECOND).
constexpr std::chrono::seconds min_reauthentication_interval{1};

// The API key of a request frame, read without decoding the rest of its header (the path of every request once
// authenticated); -1 for a frame too short to have one.
std::int16_t api_key_of(std::span<const std::byte> frame) {
  std::int16_t key_be = -1;
  if (frame.size() < sizeof key_be) return -1;
  std::memcpy(&key_be, frame.data(), sizeof key_be);
  return boost::endian::big_to_native(key_be);
}

template <typename Message>
bool version_served(std::int16_t version) {
  return version >= Message::min_version && version <= Message::max_version;
}

template <typename Response>
p::output_buffer framed(const p::request_header& header, const Response& response) {
  const bool flexible = Response::first_flexible_version >= 0 && header.api_version >= Response::first_flexible_version;
  p::output_buffer out;
  p::begin_response_frame(out, header.correlation_id, p::uses_flexible_response_header(Response::api_key, flexible));
  p::writer w(out);
  response.encode(w, header.api_version);
  p::finish_frame(out);
  return out;
}

// A SaslHandshake v0 client's token: its size and its bytes, no Kafka header.
p::output_buffer raw_token_frame(std::string_view token) {
  p::output_buffer out;
  p::writer w(out);
  w.write_int32(static_cast<std::int32_t>(token.size()));
  out.append(std::as_bytes(std::span(token)));
  return out;
}

std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::vector<std::byte> to_bytes(std::string_view text) {
  const auto bytes = std::as_bytes(std::span(text));
  return {bytes.begin(), bytes.end()};
}

request_outcome respond(p::output_buffer response) {
  request_outcome out;
  out.response = std::move(response);
  return out;
}

}  // namespace

sasl_listener_settings sasl_settings_of(const config::listener_config& listener,
                                        const config::listeners_config& listeners, std::int32_t max_request_bytes,
                                        exchange_factory make_exchange) {
  sasl_listener_settings s;
  s.listener = listener.name;
  s.mechanisms = listener.sasl.enabled_mechanisms;
  s.make_exchange = std::move(make_exchange);
  s.failed_authentication_delay = std::chrono::milliseconds(listeners.failed_authentication_delay_ms);
  s.max_receive_bytes = listeners.sasl_max_receive_bytes;
  s.max_reauth_ms = listener.sasl.max_reauth_ms;
  s.max_request_bytes = max_request_bytes;
  return s;
}

sasl_session::sasl_session(std::shared_ptr<const sasl_listener_settings> settings, const clock& clock,
                           auth_observer& observer, net::request_handler& handler)
    : settings_(std::move(settings)), clock_(clock), observer_(observer), handler_(handler) {}

std::int32_t sasl_session::max_frame_bytes() const {
  return phase_ == phase::authenticated && !expired() ? settings_->max_request_bytes : settings_->max_receive_bytes;
}

asio::awaitable<request_outcome> sasl_session::handle(std::span<std::byte> frame, net::connection_info& info) {
  step s = plan(frame, info);
  switch (s.what) {
    case step::kind::answer:
      break;
    case step::kind::request_handler:
      co_return co_await handler_.handle(frame, info);
    case step::kind::api_versions: {
      request_outcome answer = co_await handler_.handle(frame, info);
      co_return api_versions_answered(s.header, std::move(answer));
    }
    case step::kind::authenticate: {
      const result<std::string> token = co_await exchange_->respond(as_text(s.token));
      co_return token_answered(&s.header, token, info);
    }
    case step::kind::raw_token: {
      const result<std::string> token = co_await exchange_->respond(as_text(frame));
      co_return token_answered(nullptr, token, info);
    }
  }
  co_return std::move(s.answer);
}

sasl_session::step sasl_session::plan(std::span<std::byte> frame, const net::connection_info& info) {
  switch (phase_) {
    case phase::closed:
      return {.answer = request_outcome{request_outcome::action::close, {}}};
    case phase::raw_authenticate:
      return {.what = step::kind::raw_token};
    case phase::authenticated:
      return after_authentication(frame, info);
    case phase::handshake_or_versions:
    case phase::handshake:
    case phase::authenticate:
      break;
  }
  return before_authentication(frame, info);
}

sasl_session::step sasl_session::after_authentication(std::span<std::byte> frame, const net::connection_info& info) {
  // A SaslHandshake re-authenticates (KIP-368) even once the session has expired; where re-authentication is
  // off, or asked for again within a second, it goes to the dispatcher, which answers ILLEGAL_SASL_STATE.
  if (api_key_of(frame) == p::sasl_handshake_request::api_key && may_reauthenticate()) {
    last_reauthentication_ = clock_.steady_now();
    reauthenticating_ = true;
    phase_ = phase::handshake;
    return before_authentication(frame, info);
  }
  if (expired()) {
    FERRY_LOG_LIMITED(info, "security", 10000)
        << "closing " << info.peer << " on " << settings_->listener << ": its SASL session of "
        << settings_->max_reauth_ms << " ms expired without re-authentication (connections.max.reauth.ms)";
    phase_ = phase::closed;
    return {.answer = request_outcome{request_outcome::action::close, {}}};
  }
  return {.what = step::kind::request_handler};
}

sasl_session::step sasl_session::before_authentication(std::span<std::byte> frame, const net::connection_info& info) {
  p::reader r(frame);
  p::request_header header;
  if (!p::decode_request_header(r, header)) return {.answer = close(info, "request header does not parse")};
  if (phase_ == phase::authenticate) {
    if (header.api_key != p::sasl_authenticate_request::api_key)
      return {.answer = fail(info, "request other than SaslAuthenticate during the SASL exchange")};
    return sasl_authenticate(header, r, info);
  }
  if (header.api_key == p::sasl_handshake_request::api_key) return {.answer = sasl_handshake(header, r, info)};
  // One ApiVersions before the handshake, as Kafka allows (see api_versions_answered).
  if (header.api_key == p::api_versions_key && phase_ == phase::handshake_or_versions)
    return {.what = step::kind::api_versions, .header = std::move(header)};
  return {.answer = fail(info, reauthenticating_ ? "request other than SaslHandshake during re-authentication"
                                                 : "request other than ApiVersions or SaslHandshake before "
                                                   "authentication")};
}

request_outcome sasl_session::api_versions_answered(const p::request_header& header, request_outcome answer) {
  // One in a version we do not serve is answered with UNSUPPORTED_VERSION by the dispatcher and may be retried.
  if (answer.what == request_outcome::action::close || answer.what == request_outcome::action::respond_and_close)
    phase_ = phase::closed;
  else if (version_served<p::api_versions_request>(header.api_version))
    phase_ = phase::handshake;
  return answer;
}

request_outcome sasl_session::sasl_handshake(const p::request_header& header, p::reader& body,
                                             const net::connection_info& info) {
  p::sasl_handshake_request request;
  if (!version_served<p::sasl_handshake_request>(header.api_version) || !request.decode(body, header.api_version))
    return close(info, "SaslHandshake does not parse or is in a version not served");
  p::sasl_handshake_response response;
  response.mechanisms = settings_->mechanisms;
  const auto& enabled = settings_->mechanisms;
  const bool is_enabled = std::find(enabled.begin(), enabled.end(), request.mechanism) != enabled.end();
  if (reauthenticating_ && is_enabled && request.mechanism != mechanism_) {
    response.error_code = p::code(unsupported_sasl_mechanism);
    return fail(info, "re-authentication asked for another mechanism", framed(header, response));
  }
  std::unique_ptr<sasl_server_exchange> exchange = is_enabled ? settings_->make_exchange(request.mechanism) : nullptr;
  if (exchange == nullptr) {
    response.error_code = p::code(unsupported_sasl_mechanism);
    return fail(info, "the mechanism asked for is not enabled on the listener", framed(header, response));
  }
  exchange_ = std::move(exchange);
  mechanism_ = std::move(request.mechanism);
  phase_ = header.api_version == 0 ? phase::raw_authenticate : phase::authenticate;
  return respond(framed(header, response));
}

sasl_session::step sasl_session::sasl_authenticate(const p::request_header& header, p::reader& body,
                                                   const net::connection_info& info) {
  if (!version_served<p::sasl_authenticate_request>(header.api_version))
    return {.answer = close(info, "SaslAuthenticate in a version not served")};
  if (header.api_version >= p::sasl_authenticate_request::first_flexible_version) p::skip_header_tags(body);
  p::sasl_authenticate_request request;
  if (!request.decode(body, header.api_version)) return {.answer = close(info, "SaslAuthenticate does not parse")};
  return {.what = step::kind::authenticate, .header = header, .token = std::move(request.auth_bytes)};
}

request_outcome sasl_session::token_answered(const p::request_header* header, const result<std::string>& token,
                                             net::connection_info& info) {
  const auto refused = refusal(token);
  if (header == nullptr) {
    // A v0 client learns of a failure only by the connection closing.
    if (refused) return fail(info, *refused);
    if (exchange_->complete()) complete(info);
    return respond(raw_token_frame(token.value()));
  }
  p::sasl_authenticate_response response;
  if (refused) {
    response.error_code = p::code(sasl_authentication_failed);
    response.error_message = std::string(failed_authentication_message);
    return fail(info, *refused, framed(*header, response));
  }
  response.auth_bytes = to_bytes(token.value());
  if (exchange_->complete()) response.session_lifetime_ms = complete(info);
  return respond(framed(*header, response));
}

std::optional<std::string> sasl_session::refusal(const result<std::string>& token) const {
  if (!token) return token.error().message();
  // Kafka's ReauthInfo.ensurePrincipalUnchanged: a session keeps its principal.
  if (reauthenticating_ && exchange_->complete() && exchange_->user() != user_)
    return "re-authentication presented another user";
  return std::nullopt;
}

std::int64_t sasl_session::complete(net::connection_info& info) {
  observer_.succeeded(attempt(info));
  user_ = exchange_->user();
  info.principal = "User:" + user_;
  exchange_.reset();
  reauthenticating_ = false;
  phase_ = phase::authenticated;
  if (settings_->max_reauth_ms <= 0) {
    expires_.reset();
    return 0;
  }
  expires_ = clock_.steady_now() + std::chrono::milliseconds(settings_->max_reauth_ms);
  return settings_->max_reauth_ms;
}

request_outcome sasl_session::fail(const net::connection_info& info, std::string_view reason,
                                   p::output_buffer response) {
  observer_.failed(attempt(info), reason);
  phase_ = phase::closed;
  exchange_.reset();
  request_outcome out;
  out.what = response.size() > 0 ? request_outcome::action::respond_and_close : request_outcome::action::close;
  out.response = std::move(response);
  out.delay = settings_->failed_authentication_delay;
  return out;
}

request_outcome sasl_session::close(const net::connection_info& info, std::string_view reason) {
  FERRY_LOG_LIMITED(warn, "security", 1000)
      << "closing " << info.peer << " on " << settings_->listener << " during SASL authentication: " << reason;
  phase_ = phase::closed;
  exchange_.reset();
  return request_outcome{request_outcome::action::close, {}};
}

auth_attempt sasl_session::attempt(const net::connection_info& info) const {
  auth_attempt a;
  a.listener = settings_->listener;
  a.mechanism = mechanism_.empty() ? std::string_view("none") : std::string_view(mechanism_);
  a.user = exchange_ != nullptr ? std::string_view(exchange_->user()) : std::string_view(user_);
  a.client = info.peer;
  a.reauthentication = reauthenticating_;
  return a;
}

bool sasl_session::expired() const { return expires_ && clock_.steady_now() > *expires_; }

bool sasl_session::may_reauthenticate() const {
  if (settings_->max_reauth_ms <= 0) return false;
  return !last_reauthentication_ || clock_.steady_now() - *last_reauthentication_ >= min_reauthentication_interval;
}

net::session_factory make_sasl_session_factory(sasl_listener_settings settings, const clock& clock,
                                               auth_observer& observer) {
  auto shared = std::make_shared<const sasl_listener_settings>(std::move(settings));
  return [shared = std::move(shared), &clock, &observer](net::request_handler& handler) {
    return std::unique_ptr<net::connection_session>(std::make_unique<sasl_session>(shared, clock, observer, handler));
  };
}

}  // namespace ferry::security
