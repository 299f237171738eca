#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "config/listeners.h"
#include "net/connection_session.h"
#include "protocol/header.h"
#include "security/sasl_exchange.h"

namespace ferry::security {

// One authentication that ended, as the session reports it for metrics and logs. Every field is safe to log;
// only `listener` and `mechanism` are bounded sets (metric labels).
struct auth_attempt {
  std::string_view listener;
  std::string_view mechanism;  // an enabled mechanism, or "none" when the client had not chosen one of them
  std::string_view user;       // the user name the client presented; empty if it had not
  std::string_view client;     // host:port
  bool reauthentication = false;
};

// Where a session reports its authentications (auth_metrics counts and logs them).
class auth_observer {
 public:
  virtual ~auth_observer() = default;
  virtual void succeeded(const auth_attempt& attempt) = 0;
  // `reason` is for the broker's log: it names no password or token.
  virtual void failed(const auth_attempt& attempt, std::string_view reason) = 0;
};

// Makes the server side of an exchange for an enabled mechanism (make_plain_exchange, make_scram_exchange).
using exchange_factory = std::function<std::unique_ptr<sasl_server_exchange>(std::string_view mechanism)>;

// What every session of one SASL listener shares.
struct sasl_listener_settings {
  std::string listener;                 // the listener's name, for metrics and logs
  std::vector<std::string> mechanisms;  // sasl.enabled.mechanisms, in the order SaslHandshake lists them
  exchange_factory make_exchange;
  std::chrono::milliseconds failed_authentication_delay{100};  // connection.failed.authentication.delay.ms
  std::int32_t max_receive_bytes = 524288;                     // sasl.server.max.receive.size
  std::int64_t max_reauth_ms = 0;                              // connections.max.reauth.ms; 0: no expiry
  std::int32_t max_request_bytes = 104857600;                  // socket.request.max.bytes
};

// The settings of `listener` (a SASL listener) from the broker's configuration.
sasl_listener_settings sasl_settings_of(const config::listener_config& listener,
                                        const config::listeners_config& listeners, std::int32_t max_request_bytes,
                                        exchange_factory make_exchange);

// The SASL state machine of one connection, with the rules of Kafka's SaslServerAuthenticator: before
// authentication only ApiVersions (once, passed to the request handler) and SaslHandshake are served, and
// anything else closes the connection; SaslHandshake v1 is followed by SaslAuthenticate frames, v0 by raw
// tokens (a size prefix and the token, no Kafka header, as kafka-python 2.0.2 sends them). A failed
// authentication is answered (SASL_AUTHENTICATION_FAILED, or nothing for raw tokens) after the failed
// authentication delay and closes the connection. With connections.max.reauth.ms a session expires (KIP-368):
// a SaslHandshake re-authenticates (same mechanism, same principal), anything else after expiry closes.
class sasl_session final : public net::connection_session {
 public:
  sasl_session(std::shared_ptr<const sasl_listener_settings> settings, const clock& clock, auth_observer& observer,
               net::request_handler& handler);

  [[nodiscard]] std::int32_t max_frame_bytes() const override;
  boost::asio::awaitable<net::request_outcome> handle(std::span<std::byte> frame, net::connection_info& info) override;

 private:
  enum class phase {
    handshake_or_versions,  // nothing yet: ApiVersions or SaslHandshake
    handshake,              // ApiVersions answered: SaslHandshake only
    authenticate,           // SaslHandshake v1 accepted: SaslAuthenticate frames
    raw_authenticate,       // SaslHandshake v0 accepted: raw tokens
    authenticated,          // requests go to the request handler
    closed,                 // the connection is closing: nothing more is served
  };

  // What a frame needs: an answer now, the request handler, or the exchange's next step. Only handle() waits;
  // the rest of the state machine runs synchronously before and after the wait.
  struct step {
    enum class kind { answer, request_handler, api_versions, authenticate, raw_token };
    kind what = kind::answer;
    net::request_outcome answer;      // kind::answer
    protocol::request_header header;  // kind::api_versions and kind::authenticate
    std::vector<std::byte> token;     // kind::authenticate: the client's auth_bytes
  };

  step plan(std::span<std::byte> frame, const net::connection_info& info);
  step after_authentication(std::span<std::byte> frame, const net::connection_info& info);
  step before_authentication(std::span<std::byte> frame, const net::connection_info& info);
  net::request_outcome sasl_handshake(const protocol::request_header& header, protocol::reader& body,
                                      const net::connection_info& info);
  step sasl_authenticate(const protocol::request_header& header, protocol::reader& body,
                         const net::connection_info& info);

  // The handler answered the ApiVersions of `header`.
  net::request_outcome api_versions_answered(const protocol::request_header& header, net::request_outcome answer);
  // The exchange answered the token of a SaslAuthenticate (`header`), or a raw token (no header).
  net::request_outcome token_answered(const protocol::request_header* header, const result<std::string>& token,
                                      net::connection_info& info);

  // Why the exchange's answer ends the authentication (for the log), or nothing if it goes on or succeeded.
  [[nodiscard]] std::optional<std::string> refusal(const result<std::string>& token) const;
  // The exchange succeeded: the connection is authenticated as its user. Returns the session's lifetime in ms
  // (0: it does not expire).
  std::int64_t complete(net::connection_info& info);
  // Ends the authentication: reports it and closes after the delay, sending `response` first if it has any bytes.
  net::request_outcome fail(const net::connection_info& info, std::string_view reason,
                            protocol::output_buffer response = {});
  // Closes at once, without counting a failed authentication (a frame that does not parse).
  net::request_outcome close(const net::connection_info& info, std::string_view reason);
  [[nodiscard]] auth_attempt attempt(const net::connection_info& info) const;

  [[nodiscard]] bool expired() const;
  [[nodiscard]] bool may_reauthenticate() const;

  std::shared_ptr<const sasl_listener_settings> settings_;
  const clock& clock_;
  auth_observer& observer_;
  net::request_handler& handler_;

  phase phase_ = phase::handshake_or_versions;
  std::string mechanism_;  // the mechanism of the exchange under way, or of the authenticated session
  std::unique_ptr<sasl_server_exchange> exchange_;
  std::string user_;  // the authenticated user (re-authentication must keep it)
  bool reauthenticating_ = false;
  std::optional<std::chrono::steady_clock::time_point> expires_;
  std::optional<std::chrono::steady_clock::time_point> last_reauthentication_;
};

// The session factory of a SASL listener (net::session_factory): one sasl_session per connection, sharing the
// settings. `clock` and `observer` outlive the listener.
net::session_factory make_sasl_session_factory(sasl_listener_settings settings, const clock& clock,
                                               auth_observer& observer);

}  // namespace ferry::security
