// A model test of sasl_session: the input is a sequence of client events (ApiVersions, SaslHandshake v0-2 with
// good or bad mechanisms, SaslAuthenticate frames and raw tokens with good or bad tokens, other APIs, garbage
// frames, time passing), and after every event the session's visible behaviour must agree with the rules:
// - before authentication nothing but ApiVersions reaches the request handler;
// - the principal changes only with a successful exchange, to that exchange's user;
// - an expired session serves nothing but SaslHandshake;
// - after a close nothing more is served or reported;
// - max_frame_bytes is the request limit exactly when authenticated, not expired and not re-authenticating.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "security/testing/sasl_session_fakes.h"

namespace {
using namespace ferry;
using namespace ferry::security;
using namespace ferry::security::testing;
namespace p = ferry::protocol;
using action = net::request_outcome::action;

constexpr std::int32_t receive_limit = 512;
constexpr std::int32_t request_limit = 1 << 16;
constexpr std::int64_t lifetime_ms = 5000;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "sasl_session invariant broken: %s\n", what);
  std::abort();
}

class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool empty() const { return at_ >= size_; }
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::vector<std::byte> bytes(std::size_t n) {
    std::vector<std::byte> out;
    while (out.size() < n && !empty()) out.push_back(static_cast<std::byte>(byte()));
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

std::string token(input& in) {
  const std::string user = in.byte() % 2 == 0 ? "alice" : "bob";
  switch (in.byte() % 6) {
    case 0:
      return "login " + user + " " + std::string(good_password);
    case 1:
      return "login " + user + " wrong";
    case 2:
      return "first " + user;
    case 3:
      return "proof " + std::string(good_password);
    case 4:
      return "proof wrong";
    default: {
      const auto raw = in.bytes(in.byte() % 16);
      return {reinterpret_cast<const char*>(raw.data()), raw.size()};
    }
  }
}

std::vector<std::byte> next_frame(input& in) {
  static const char* const mechanisms[] = {"PLAIN", "SCRAM-SHA-256", "GSSAPI", ""};
  switch (in.byte() % 6) {
    case 0:
      return request_frame(p::api_versions_request{}, static_cast<std::int16_t>(in.byte() % 6));
    case 1: {
      const char* mechanism = mechanisms[in.byte() % 4];
      return handshake_frame(mechanism, static_cast<std::int16_t>(in.byte() % 3));
    }
    case 2: {
      const auto version = static_cast<std::int16_t>(in.byte() % 4);
      return authenticate_frame(token(in), version);
    }
    case 3:
      return bytes_of(token(in));  // a raw token (or, out of v0's raw phase, a frame that rarely parses)
    case 4:
      return request_frame(p::metadata_request{}, 4);
    default:
      return in.bytes(in.byte() % 24);  // garbage
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  sasl_listener_settings settings;
  settings.listener = "SASL";
  settings.mechanisms = {"PLAIN", "SCRAM-SHA-256"};
  settings.make_exchange = fake_exchanges();
  settings.max_receive_bytes = receive_limit;
  settings.max_request_bytes = request_limit;
  settings.max_reauth_ms = in.byte() % 2 == 0 ? 0 : lifetime_ms;
  manual_clock clock;
  recording_observer observer;
  fake_request_handler handler;
  net::connection_info info;
  info.peer = "192.0.2.1:40000";
  auto session = make_sasl_session_factory(settings, clock, observer)(handler);

  bool closed = false;
  bool authenticated = false;
  bool reauthenticating = false;
  std::optional<std::chrono::steady_clock::time_point> expires;
  while (!in.empty()) {
    if (in.byte() % 4 == 0) {
      clock.advance(std::chrono::milliseconds(in.byte() * 50));
      continue;
    }
    const bool expired = expires && clock.steady_now() > *expires;
    const bool request_limit_expected = authenticated && !closed && !expired && !reauthenticating;
    check(session->max_frame_bytes() == (request_limit_expected ? request_limit : receive_limit), "frame limit");

    const auto frame = next_frame(in);
    const bool is_handshake = frame.size() >= 2 && frame[0] == std::byte{0} &&
                              frame[1] == static_cast<std::byte>(p::sasl_handshake_request::api_key);
    const auto served_before = handler.requests.size();
    const auto successes_before = observer.successes.size();
    const auto failures_before = observer.failures.size();
    const auto principal_before = info.principal;

    const net::request_outcome out = run(*session, frame, info);
    const auto served = handler.requests.size() - served_before;
    const bool succeeded = observer.successes.size() > successes_before;

    check(served <= 1, "one frame, one request");
    if (closed) {
      check(out.what == action::close && served == 0, "served after a close");
      check(!succeeded && observer.failures.size() == failures_before, "reported after a close");
      continue;
    }
    if (served == 1 && !authenticated)
      check(handler.requests.back().api_key == p::api_versions_key, "only ApiVersions before authentication");
    // A re-authentication under way goes on past the old session's end, as Kafka's does.
    if (expired && !reauthenticating && !is_handshake)
      check(served == 0 && out.what == action::close, "expired session served");
    if (info.principal != principal_before)
      check(succeeded && info.principal == "User:" + observer.successes.back().user, "principal without success");
    if (succeeded) {
      check(observer.successes.size() == successes_before + 1, "one success per frame");
      check(info.principal == "User:" + observer.successes.back().user, "principal of the success");
      check(observer.successes.back().reauthentication == authenticated, "re-authentication flag");
      authenticated = true;
      reauthenticating = false;
      if (settings.max_reauth_ms > 0) expires = clock.steady_now() + std::chrono::milliseconds(settings.max_reauth_ms);
    } else if (authenticated && is_handshake && served == 0 && out.what == action::respond) {
      reauthenticating = true;
    }
    if (out.what == action::close || out.what == action::respond_and_close) closed = true;
    if (observer.failures.size() > failures_before) check(closed, "a failure closes");
  }
  return 0;
}
