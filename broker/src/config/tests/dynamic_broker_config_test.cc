#include "config/dynamic_broker_config.h"

#include <gtest/gtest.h>

namespace ferry::config {
namespace {

listeners_config two_listeners() {
  listeners_config c;
  c.listeners.push_back({.name = "PLAIN", .protocol = security_protocol::plaintext});
  c.listeners.push_back({.name = "EXTERNAL", .protocol = security_protocol::sasl_ssl});
  c.listeners.back().tls.keystore_location = "/etc/ferry/broker.pem";
  c.listeners.back().tls.truststore_certificates = "-----BEGIN CERTIFICATE-----...";
  return c;
}

TEST(dynamic_broker_config, only_the_replication_throttles_and_tls_files_change_at_run_time) {
  const auto listeners = two_listeners();
  EXPECT_FALSE(check_dynamic_broker_setting("leader.replication.throttled.rate", "1000000", listeners, true));
  EXPECT_FALSE(check_dynamic_broker_setting("follower.replication.throttled.rate", "0", listeners, false));
  const auto static_one = check_dynamic_broker_setting("log.retention.ms", "1000", listeners, true);
  ASSERT_TRUE(static_one);
  EXPECT_NE(static_one->message.find("'log.retention.ms' cannot change while the broker runs"), std::string::npos);
  for (const auto* bad : {"-1", "fast", "1e6", ""}) {
    const auto refused = check_dynamic_broker_setting("leader.replication.throttled.rate", bad, listeners, true);
    ASSERT_TRUE(refused) << bad;
    EXPECT_NE(refused->message.find("bytes per second"), std::string::npos);
  }
}

// As Kafka's per-broker dynamic listener settings: a TLS listener's key and trust files, for one broker.
TEST(dynamic_broker_config, a_tls_listeners_files_change_per_broker) {
  const auto listeners = two_listeners();
  const std::string keystore = "listener.name.external.ssl.keystore.location";
  EXPECT_FALSE(check_dynamic_broker_setting(keystore, "/etc/ferry/new.pem", listeners, true));
  EXPECT_FALSE(
      check_dynamic_broker_setting("listener.name.external.ssl.truststore.location", "/ca.pem", listeners, true));
  const auto for_all = check_dynamic_broker_setting(keystore, "/etc/ferry/new.pem", listeners, false);
  ASSERT_TRUE(for_all);
  EXPECT_NE(for_all->message.find("can only be set for one broker"), std::string::npos);
  EXPECT_TRUE(check_dynamic_broker_setting(keystore, "", listeners, true));
  // A listener without TLS, another TLS setting, a secret that ZooKeeper would hold in the clear.
  const auto no_tls = check_dynamic_broker_setting("listener.name.plain.ssl.keystore.location", "/k", listeners, true);
  ASSERT_TRUE(no_tls);
  EXPECT_NE(no_tls->message.find("for a listener with TLS"), std::string::npos);
  const auto protocols =
      check_dynamic_broker_setting("listener.name.external.ssl.enabled.protocols", "TLSv1.3", listeners, true);
  ASSERT_TRUE(protocols);
  EXPECT_NE(protocols->message.find("cannot change while the broker runs"), std::string::npos);
  const auto secret = check_dynamic_broker_setting("listener.name.external.ssl.key.password", "x", listeners, true);
  ASSERT_TRUE(secret);
  EXPECT_NE(secret->message.find("in the clear"), std::string::npos);

  const auto& external = listeners.listeners.back();
  const auto unchanged = with_dynamic_tls_files(external, [](const std::string&) { return std::nullopt; });
  EXPECT_EQ(unchanged, external.tls);
  const auto moved = with_dynamic_tls_files(external, [](const std::string& name) -> std::optional<std::string> {
    if (name == "listener.name.external.ssl.truststore.location") return "/etc/ferry/ca.pem";
    return std::nullopt;
  });
  EXPECT_EQ(moved.keystore_location, "/etc/ferry/broker.pem");
  EXPECT_EQ(moved.truststore_location, "/etc/ferry/ca.pem");
  EXPECT_TRUE(moved.truststore_certificates.empty());
}

TEST(dynamic_broker_config, a_rate_limits_unless_unset_or_the_default) {
  EXPECT_EQ(replication_throttle_rate(std::nullopt), std::nullopt);
  EXPECT_EQ(replication_throttle_rate("9223372036854775807"), std::nullopt);
  EXPECT_EQ(replication_throttle_rate("garbled"), std::nullopt);
  EXPECT_EQ(replication_throttle_rate("100000"), 100000);
  EXPECT_EQ(replication_throttle_rate("0"), 0);
}

}  // namespace
}  // namespace ferry::config
