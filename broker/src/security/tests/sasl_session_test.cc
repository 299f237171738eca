#include "security/sasl_session.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <chrono>

#include "security/auth_metrics.h"
#include "security/testing/sasl_session_fakes.h"

namespace ferry::security {
namespace {
namespace p = protocol;
using namespace std::chrono_literals;
using namespace testing;
using action = net::request_outcome::action;

constexpr std::int32_t receive_limit = 4096;
constexpr std::int32_t request_limit = 1 << 20;
constexpr auto delay = 250ms;
// Kafka's codes (Errors.java).
constexpr std::int16_t unsupported_sasl_mechanism = 33;
constexpr std::int16_t sasl_authentication_failed = 58;

std::vector<std::byte> metadata_frame() { return request_frame(p::metadata_request{}, 4); }
std::vector<std::byte> api_versions_frame(std::int16_t version = 3) {
  return request_frame(p::api_versions_request{}, version);
}

class sasl_session_test : public ::testing::Test {
 protected:
  explicit sasl_session_test(std::int64_t reauth_ms = 0) {
    settings_.listener = "SASL";
    settings_.mechanisms = {"PLAIN", "SCRAM-SHA-256"};
    settings_.make_exchange = fake_exchanges();
    settings_.failed_authentication_delay = delay;
    settings_.max_receive_bytes = receive_limit;
    settings_.max_reauth_ms = reauth_ms;
    settings_.max_request_bytes = request_limit;
    info_.peer = "10.0.0.1:50000";
    session_ = make_sasl_session_factory(settings_, clock_, observer_)(handler_);
  }

  net::request_outcome send(std::vector<std::byte> frame) { return run(*session_, std::move(frame), info_); }

  // ApiVersions, SaslHandshake v1 and one SaslAuthenticate in `version`, as Java clients log in.
  p::sasl_authenticate_response log_in(std::string_view user, std::int16_t version = 1) {
    EXPECT_EQ(send(handshake_frame("PLAIN", 1)).what, action::respond);
    auto out = send(authenticate_frame("login " + std::string(user) + " secret", version));
    EXPECT_EQ(out.what, action::respond);
    return decode_response<p::sasl_authenticate_response>(out.response, version).value();
  }

  void expect_failed_close(const net::request_outcome& out, action what) {
    EXPECT_EQ(out.what, what);
    EXPECT_EQ(out.delay, delay);
    EXPECT_EQ(observer_.failures.size(), 1U);
  }

  sasl_listener_settings settings_;
  manual_clock clock_;
  recording_observer observer_;
  fake_request_handler handler_;
  net::connection_info info_;
  std::unique_ptr<net::connection_session> session_;
};

class sasl_session_reauth_test : public sasl_session_test {
 protected:
  sasl_session_reauth_test() : sasl_session_test(60'000) {}
};

TEST_F(sasl_session_test, java_flow_api_versions_handshake_v1_authenticate) {
  auto versions = send(api_versions_frame());
  EXPECT_EQ(versions.what, action::respond);
  ASSERT_EQ(handler_.requests.size(), 1U);
  EXPECT_EQ(handler_.requests[0].api_key, p::api_versions_key);

  auto handshake = send(handshake_frame("PLAIN", 1));
  auto hs = decode_response<p::sasl_handshake_response>(handshake.response, 1).value();
  EXPECT_EQ(hs.error_code, 0);
  EXPECT_EQ(hs.mechanisms, (std::vector<std::string>{"PLAIN", "SCRAM-SHA-256"}));
  EXPECT_EQ(info_.principal, "User:ANONYMOUS");

  auto out = send(authenticate_frame("login alice secret", 1));
  auto auth = decode_response<p::sasl_authenticate_response>(out.response, 1).value();
  EXPECT_EQ(auth.error_code, 0);
  EXPECT_FALSE(auth.error_message.has_value());
  EXPECT_TRUE(auth.auth_bytes.empty());
  EXPECT_EQ(auth.session_lifetime_ms, 0);  // connections.max.reauth.ms is 0
  EXPECT_EQ(info_.principal, "User:alice");
  ASSERT_EQ(observer_.successes.size(), 1U);
  EXPECT_EQ(observer_.successes[0].mechanism, "PLAIN");
  EXPECT_EQ(observer_.successes[0].user, "alice");
  EXPECT_FALSE(observer_.successes[0].reauthentication);

  EXPECT_EQ(send(metadata_frame()).what, action::respond);
  ASSERT_EQ(handler_.requests.size(), 2U);
  EXPECT_EQ(handler_.requests[1].api_key, p::metadata_request::api_key);
  EXPECT_EQ(handler_.requests[1].principal, "User:alice");
}

TEST_F(sasl_session_test, handshake_may_come_first_and_authenticate_v0_and_v2_work) {
  EXPECT_EQ(log_in("bob", 2).error_code, 0);  // v2: flexible header and body
  EXPECT_EQ(info_.principal, "User:bob");
  EXPECT_TRUE(handler_.requests.empty());
}

TEST_F(sasl_session_test, two_step_mechanism_answers_each_step) {
  send(handshake_frame("SCRAM-SHA-256", 1));
  auto first = send(authenticate_frame("first carol", 1));
  auto challenge = decode_response<p::sasl_authenticate_response>(first.response, 1).value();
  EXPECT_EQ(challenge.error_code, 0);
  EXPECT_EQ(challenge.auth_bytes, bytes_of("challenge"));
  EXPECT_EQ(info_.principal, "User:ANONYMOUS");
  EXPECT_EQ(session_->max_frame_bytes(), receive_limit);

  auto final_out = send(authenticate_frame("proof secret", 1));
  auto verifier = decode_response<p::sasl_authenticate_response>(final_out.response, 1).value();
  EXPECT_EQ(verifier.error_code, 0);
  EXPECT_EQ(verifier.auth_bytes, bytes_of("verifier"));
  EXPECT_EQ(info_.principal, "User:carol");
  EXPECT_EQ(observer_.successes.at(0).mechanism, "SCRAM-SHA-256");
}

TEST_F(sasl_session_test, second_api_versions_before_handshake_closes) {
  send(api_versions_frame());
  auto out = send(api_versions_frame());
  expect_failed_close(out, action::close);
  EXPECT_EQ(out.response.size(), 0U);
  EXPECT_EQ(handler_.requests.size(), 1U);
}

TEST_F(sasl_session_test, api_versions_in_a_version_not_served_may_be_retried) {
  send(api_versions_frame(p::api_versions_request::max_version + 1));  // answered UNSUPPORTED_VERSION upstream
  EXPECT_EQ(send(api_versions_frame()).what, action::respond);
  EXPECT_EQ(handler_.requests.size(), 2U);
  EXPECT_TRUE(observer_.failures.empty());
}

TEST_F(sasl_session_test, api_versions_after_handshake_closes) {
  send(handshake_frame("PLAIN", 1));
  expect_failed_close(send(api_versions_frame()), action::close);
  EXPECT_TRUE(handler_.requests.empty());
  EXPECT_EQ(observer_.failures[0].mechanism, "PLAIN");
}

TEST_F(sasl_session_test, other_api_before_authentication_closes_without_reply) {
  auto out = send(metadata_frame());
  expect_failed_close(out, action::close);
  EXPECT_EQ(out.response.size(), 0U);
  EXPECT_TRUE(handler_.requests.empty());
  EXPECT_EQ(observer_.failures[0].mechanism, "none");
  // Nothing more is served on a connection that failed.
  EXPECT_EQ(send(api_versions_frame()).what, action::close);
  EXPECT_TRUE(handler_.requests.empty());
}

TEST_F(sasl_session_test, unknown_mechanism_gets_33_with_enabled_list_then_closes) {
  for (std::int16_t version : {0, 1}) {
    SCOPED_TRACE(version);
    session_ = make_sasl_session_factory(settings_, clock_, observer_)(handler_);
    observer_.failures.clear();
    auto out = send(handshake_frame("GSSAPI", version));
    expect_failed_close(out, action::respond_and_close);
    auto hs = decode_response<p::sasl_handshake_response>(out.response, version).value();
    EXPECT_EQ(hs.error_code, unsupported_sasl_mechanism);
    EXPECT_EQ(hs.mechanisms, settings_.mechanisms);
    EXPECT_EQ(observer_.failures[0].mechanism, "none");
  }
}

TEST_F(sasl_session_test, failed_authentication_is_58_with_one_generic_message_after_the_delay) {
  std::optional<std::string> first_message;
  for (std::string_view token : {"login alice wrong", "login nobody wrong", "garbage"}) {
    SCOPED_TRACE(token);
    session_ = make_sasl_session_factory(settings_, clock_, observer_)(handler_);
    observer_.failures.clear();
    send(handshake_frame("PLAIN", 1));
    auto out = send(authenticate_frame(token, 1));
    expect_failed_close(out, action::respond_and_close);
    auto auth = decode_response<p::sasl_authenticate_response>(out.response, 1).value();
    EXPECT_EQ(auth.error_code, sasl_authentication_failed);
    ASSERT_TRUE(auth.error_message.has_value());
    if (!first_message) first_message = auth.error_message;
    EXPECT_EQ(auth.error_message, first_message);  // no telling an unknown user from a wrong password
    EXPECT_EQ(info_.principal, "User:ANONYMOUS");
    EXPECT_EQ(send(authenticate_frame("login alice secret", 1)).what, action::close);
  }
  EXPECT_EQ(observer_.failures.size(), 1U);
}

TEST_F(sasl_session_test, failure_reports_presented_user_and_reason_without_password) {
  send(handshake_frame("PLAIN", 1));
  send(authenticate_frame("login alice hunter2", 1));
  ASSERT_EQ(observer_.failures.size(), 1U);
  EXPECT_EQ(observer_.failures[0].user, "alice");
  EXPECT_EQ(observer_.failures[0].reason, make_error_code(errc::bad_password).message());
  EXPECT_EQ(observer_.failures[0].reason.find("hunter2"), std::string::npos);
}

TEST_F(sasl_session_test, other_request_mid_exchange_closes) {
  send(handshake_frame("SCRAM-SHA-256", 1));
  send(authenticate_frame("first carol", 1));
  expect_failed_close(send(metadata_frame()), action::close);
  EXPECT_TRUE(handler_.requests.empty());
  EXPECT_EQ(info_.principal, "User:ANONYMOUS");
}

TEST_F(sasl_session_test, v0_raw_tokens_plain_success_is_the_empty_token) {
  auto handshake = send(handshake_frame("PLAIN", 0));
  EXPECT_EQ(decode_response<p::sasl_handshake_response>(handshake.response, 0).value().error_code, 0);
  auto out = send(bytes_of("login dave secret"));  // no Kafka header: the token is the whole frame
  EXPECT_EQ(out.what, action::respond);
  EXPECT_EQ(out.response.flatten(), std::vector<std::byte>(4, std::byte{0}));
  EXPECT_EQ(info_.principal, "User:dave");
  EXPECT_EQ(send(metadata_frame()).what, action::respond);
  EXPECT_EQ(handler_.requests.at(0).principal, "User:dave");
}

TEST_F(sasl_session_test, v0_raw_tokens_two_steps_are_size_prefixed) {
  send(handshake_frame("SCRAM-SHA-256", 0));
  auto out = send(bytes_of("first erin"));
  auto expected = std::vector<std::byte>{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{9}};
  auto text = bytes_of("challenge");
  expected.insert(expected.end(), text.begin(), text.end());
  EXPECT_EQ(out.response.flatten(), expected);
  send(bytes_of("proof secret"));
  EXPECT_EQ(info_.principal, "User:erin");
}

TEST_F(sasl_session_test, v0_raw_failure_closes_after_the_delay_without_reply) {
  send(handshake_frame("PLAIN", 0));
  auto out = send(bytes_of("login dave nope"));
  expect_failed_close(out, action::close);
  EXPECT_EQ(out.response.size(), 0U);
  EXPECT_EQ(info_.principal, "User:ANONYMOUS");
}

TEST_F(sasl_session_test, frames_that_do_not_parse_close_at_once) {
  auto out = send({std::byte{0}});
  EXPECT_EQ(out.what, action::close);
  EXPECT_EQ(out.delay, 0ms);
  EXPECT_TRUE(observer_.failures.empty());

  session_ = make_sasl_session_factory(settings_, clock_, observer_)(handler_);
  auto bad_version = handshake_frame("PLAIN", 1);
  bad_version[3] = std::byte{5};  // SaslHandshake v5
  EXPECT_EQ(send(bad_version).what, action::close);

  session_ = make_sasl_session_factory(settings_, clock_, observer_)(handler_);
  send(handshake_frame("PLAIN", 1));
  auto truncated = authenticate_frame("login alice secret", 1);
  truncated.resize(truncated.size() - 3);
  EXPECT_EQ(send(truncated).what, action::close);
  EXPECT_EQ(info_.principal, "User:ANONYMOUS");
}

TEST_F(sasl_session_test, receive_limit_until_authenticated_then_request_limit) {
  EXPECT_EQ(session_->max_frame_bytes(), receive_limit);
  send(api_versions_frame());
  EXPECT_EQ(session_->max_frame_bytes(), receive_limit);
  send(handshake_frame("PLAIN", 1));
  EXPECT_EQ(session_->max_frame_bytes(), receive_limit);
  send(authenticate_frame("login alice secret", 1));
  EXPECT_EQ(session_->max_frame_bytes(), request_limit);
}

TEST_F(sasl_session_test, handshake_after_completion_without_reauth_goes_to_the_dispatcher) {
  log_in("alice");
  EXPECT_EQ(send(handshake_frame("PLAIN", 1)).what, action::respond);
  EXPECT_EQ(send(authenticate_frame("login alice secret", 1)).what, action::respond);
  ASSERT_EQ(handler_.requests.size(), 2U);  // the dispatcher answers both with ILLEGAL_SASL_STATE
  EXPECT_EQ(handler_.requests[0].api_key, p::sasl_handshake_request::api_key);
  EXPECT_EQ(handler_.requests[1].api_key, p::sasl_authenticate_request::api_key);
  clock_.advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(send(metadata_frame()).what, action::respond);  // no lifetime, no expiry
}

TEST_F(sasl_session_test, settings_of_a_configured_listener) {
  config::listener_config listener;
  listener.name = "EXTERNAL";
  listener.protocol = config::security_protocol::sasl_ssl;
  listener.sasl.enabled_mechanisms = {"SCRAM-SHA-512"};
  listener.sasl.max_reauth_ms = 3600000;
  config::listeners_config listeners;
  listeners.sasl_max_receive_bytes = 1000;
  listeners.failed_authentication_delay_ms = 5;
  auto s = sasl_settings_of(listener, listeners, 2000, fake_exchanges());
  EXPECT_EQ(s.listener, "EXTERNAL");
  EXPECT_EQ(s.mechanisms, listener.sasl.enabled_mechanisms);
  EXPECT_EQ(s.failed_authentication_delay, 5ms);
  EXPECT_EQ(s.max_receive_bytes, 1000);
  EXPECT_EQ(s.max_reauth_ms, 3600000);
  EXPECT_EQ(s.max_request_bytes, 2000);
  EXPECT_NE(s.make_exchange("SCRAM-SHA-512"), nullptr);
}

TEST_F(sasl_session_reauth_test, session_lifetime_is_connections_max_reauth_ms) {
  EXPECT_EQ(log_in("alice", 1).session_lifetime_ms, 60'000);
  session_ = make_sasl_session_factory(settings_, clock_, observer_)(handler_);
  EXPECT_EQ(log_in("alice", 0).session_lifetime_ms, 0);  // v0 has no such field
}

TEST_F(sasl_session_reauth_test, expired_session_serves_nothing_but_handshake) {
  log_in("alice");
  clock_.advance(60s);
  EXPECT_EQ(send(metadata_frame()).what, action::respond);  // at the lifetime's end, not past it
  EXPECT_EQ(session_->max_frame_bytes(), request_limit);
  clock_.advance(1ms);
  EXPECT_EQ(session_->max_frame_bytes(), receive_limit);
  auto out = send(metadata_frame());
  EXPECT_EQ(out.what, action::close);
  EXPECT_EQ(handler_.requests.size(), 1U);
  EXPECT_EQ(send(handshake_frame("PLAIN", 1)).what, action::close);  // closed is closed
}

TEST_F(sasl_session_reauth_test, expired_v0_session_closes_too) {
  send(handshake_frame("PLAIN", 0));
  send(bytes_of("login dave secret"));
  clock_.advance(61s);
  EXPECT_EQ(send(metadata_frame()).what, action::close);
  EXPECT_TRUE(handler_.requests.empty());
}

TEST_F(sasl_session_reauth_test, reauthentication_keeps_the_connection_and_renews_the_lifetime) {
  log_in("alice");
  clock_.advance(50s);
  auto hs = send(handshake_frame("PLAIN", 1));
  EXPECT_EQ(decode_response<p::sasl_handshake_response>(hs.response, 1).value().error_code, 0);
  EXPECT_EQ(session_->max_frame_bytes(), receive_limit);
  EXPECT_EQ(info_.principal, "User:alice");
  auto out = send(authenticate_frame("login alice secret", 2));
  EXPECT_EQ(decode_response<p::sasl_authenticate_response>(out.response, 2).value().session_lifetime_ms, 60'000);
  ASSERT_EQ(observer_.successes.size(), 2U);
  EXPECT_TRUE(observer_.successes[1].reauthentication);
  clock_.advance(50s);  // 100 s after the first login, 50 s after the second
  EXPECT_EQ(send(metadata_frame()).what, action::respond);
  EXPECT_EQ(handler_.requests.size(), 1U);
  EXPECT_TRUE(handler_.requests[0].principal == "User:alice");
}

TEST_F(sasl_session_reauth_test, reauthentication_after_expiry_is_allowed) {
  log_in("alice");
  clock_.advance(120s);
  send(handshake_frame("PLAIN", 1));
  send(authenticate_frame("login alice secret", 1));
  EXPECT_EQ(send(metadata_frame()).what, action::respond);
}

TEST_F(sasl_session_reauth_test, reauthentication_as_another_user_fails) {
  log_in("alice");
  send(handshake_frame("PLAIN", 1));
  auto out = send(authenticate_frame("login mallory secret", 1));
  expect_failed_close(out, action::respond_and_close);
  EXPECT_EQ(decode_response<p::sasl_authenticate_response>(out.response, 1).value().error_code,
            sasl_authentication_failed);
  EXPECT_EQ(info_.principal, "User:alice");
  EXPECT_TRUE(observer_.failures[0].reauthentication);
  EXPECT_EQ(send(metadata_frame()).what, action::close);
  EXPECT_TRUE(handler_.requests.empty());
}

TEST_F(sasl_session_reauth_test, reauthentication_with_another_mechanism_fails) {
  log_in("alice");
  auto out = send(handshake_frame("SCRAM-SHA-256", 1));
  expect_failed_close(out, action::respond_and_close);
  EXPECT_EQ(decode_response<p::sasl_handshake_response>(out.response, 1).value().error_code,
            unsupported_sasl_mechanism);
  EXPECT_EQ(observer_.failures[0].mechanism, "PLAIN");
  EXPECT_EQ(observer_.failures[0].user, "alice");
}

TEST_F(sasl_session_reauth_test, requests_during_reauthentication_are_not_served) {
  log_in("alice");
  send(handshake_frame("PLAIN", 1));
  expect_failed_close(send(metadata_frame()), action::close);
  EXPECT_TRUE(handler_.requests.empty());
}

TEST_F(sasl_session_reauth_test, at_most_one_reauthentication_a_second) {
  log_in("alice");
  send(handshake_frame("PLAIN", 1));
  send(authenticate_frame("login alice secret", 1));
  clock_.advance(999ms);
  EXPECT_EQ(send(handshake_frame("PLAIN", 1)).what, action::respond);
  ASSERT_EQ(handler_.requests.size(), 1U);  // to the dispatcher: ILLEGAL_SASL_STATE
  clock_.advance(1ms);
  send(handshake_frame("PLAIN", 1));
  EXPECT_EQ(handler_.requests.size(), 1U);
  EXPECT_EQ(send(authenticate_frame("login alice secret", 1)).what, action::respond);
  EXPECT_EQ(observer_.successes.size(), 3U);
}

TEST(auth_metrics, counts_per_listener_and_mechanism_without_the_user) {
  prometheus::Registry registry;
  auth_metrics metrics(registry);
  metrics.succeeded({"SASL", "PLAIN", "alice", "10.0.0.1:1", false});
  metrics.succeeded({"SASL", "PLAIN", "bob", "10.0.0.1:2", false});
  metrics.failed({"SASL", "none", "", "10.0.0.1:3", false}, "request before authentication");
  metrics.failed({"SASL", "SCRAM-SHA-512", "eve\nforged line", "10.0.0.1:4", true}, "wrong password");
  std::map<std::string, double> values;
  for (const auto& family : registry.Collect()) {
    for (const auto& metric : family.metric) {
      std::string key = family.name;
      for (const auto& label : metric.label) {
        EXPECT_TRUE(label.name == "listener" || label.name == "mechanism") << label.name;
        key += "," + label.value;
      }
      values[key] = metric.counter.value;
    }
  }
  EXPECT_EQ(values["ferry_sasl_authentication_successes_total,SASL,PLAIN"], 2);
  EXPECT_EQ(values["ferry_sasl_authentication_failures_total,SASL,none"], 1);
  EXPECT_EQ(values["ferry_sasl_reauthentication_failures_total,SASL,SCRAM-SHA-512"], 1);
  EXPECT_EQ(values.size(), 3U);
}

}  // namespace
}  // namespace ferry::security
