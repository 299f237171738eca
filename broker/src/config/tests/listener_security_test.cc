#include "config/listener_security.h"

#include <gtest/gtest.h>

namespace ferry::config {
namespace {

using settings = std::map<std::string, std::string>;

std::string error_of(const settings& s) {
  try {
    (void)parse_listeners(s);
  } catch (const config_exception& e) {
    return e.what();
  }
  return "";
}

settings tls_and_sasl() {
  return {{"listeners", "PLAINTEXT://:9092,SSL://:9093,SASL_SSL://:9094,SASL_PLAINTEXT://:9095"},
          {"ssl.keystore.location", "/etc/ferry/broker.pem"},
          {"ssl.truststore.location", "/etc/ferry/ca.pem"},
          {"sasl.enabled.mechanisms", "SCRAM-SHA-512,plain"}};
}

const listener_config& named(const listeners_config& c, const std::string& name) {
  for (const auto& l : c.listeners)
    if (l.name == name) return l;
  throw std::logic_error("no listener " + name);
}

TEST(listener_security, each_protocol_reads_its_settings) {
  const auto c = parse_listeners(tls_and_sasl());
  EXPECT_EQ(named(c, "PLAINTEXT").protocol, security_protocol::plaintext);
  const auto& ssl = named(c, "SSL");
  EXPECT_EQ(ssl.protocol, security_protocol::ssl);
  EXPECT_EQ(ssl.tls.keystore_location, "/etc/ferry/broker.pem");
  EXPECT_EQ(ssl.tls.truststore_location, "/etc/ferry/ca.pem");
  EXPECT_EQ(ssl.tls.enabled_protocols, (std::vector<std::string>{"TLSv1.2", "TLSv1.3"}));
  EXPECT_TRUE(ssl.sasl.enabled_mechanisms.empty());
  const auto& sasl_ssl = named(c, "SASL_SSL");
  EXPECT_EQ(sasl_ssl.sasl.enabled_mechanisms, (std::vector<std::string>{"SCRAM-SHA-512", "PLAIN"}));
  EXPECT_EQ(sasl_ssl.tls.keystore_location, "/etc/ferry/broker.pem");
  EXPECT_TRUE(named(c, "SASL_PLAINTEXT").tls.keystore_location.empty());
  EXPECT_EQ(c.sasl_max_receive_bytes, 524288);
  EXPECT_EQ(c.failed_authentication_delay_ms, 100);
}

TEST(listener_security, listener_prefixed_settings_win) {
  auto s = tls_and_sasl();
  s["listener.name.ssl.ssl.keystore.location"] = "/etc/ferry/ssl.pem";
  s["listener.name.sasl_plaintext.sasl.enabled.mechanisms"] = "PLAIN";
  s["listener.name.sasl_ssl.connections.max.reauth.ms"] = "60000";
  const auto c = parse_listeners(s);
  EXPECT_EQ(named(c, "SSL").tls.keystore_location, "/etc/ferry/ssl.pem");
  EXPECT_EQ(named(c, "SASL_SSL").tls.keystore_location, "/etc/ferry/broker.pem");
  EXPECT_EQ(named(c, "SASL_PLAINTEXT").sasl.enabled_mechanisms, std::vector<std::string>{"PLAIN"});
  EXPECT_EQ(named(c, "SASL_SSL").sasl.max_reauth_ms, 60000);
  EXPECT_EQ(named(c, "SASL_PLAINTEXT").sasl.max_reauth_ms, 0);
}

TEST(listener_security, sasl_ssl_takes_client_auth_only_from_its_own_prefix) {  // KIP-684
  auto s = tls_and_sasl();
  s["ssl.client.auth"] = "required";
  auto c = parse_listeners(s);
  EXPECT_EQ(named(c, "SSL").tls.client_authentication, client_auth::required);
  EXPECT_EQ(named(c, "SASL_SSL").tls.client_authentication, client_auth::none);
  s["listener.name.sasl_ssl.ssl.client.auth"] = "requested";
  c = parse_listeners(s);
  EXPECT_EQ(named(c, "SASL_SSL").tls.client_authentication, client_auth::requested);
}

TEST(listener_security, ssl_protocol_tlsv12_alone_limits_the_enabled_protocols) {
  auto s = tls_and_sasl();
  s["ssl.protocol"] = "TLSv1.2";
  EXPECT_EQ(named(parse_listeners(s), "SSL").tls.enabled_protocols, std::vector<std::string>{"TLSv1.2"});
  s["ssl.enabled.protocols"] = "TLSv1.3";
  EXPECT_EQ(named(parse_listeners(s), "SSL").tls.enabled_protocols, std::vector<std::string>{"TLSv1.3"});
}

TEST(listener_security, inline_pem_and_the_inter_broker_login) {
  settings s{{"listeners", "INTERNAL://:9092"},
             {"listener.security.protocol.map", "INTERNAL:SASL_SSL"},
             {"inter.broker.listener.name", "INTERNAL"},
             {"ssl.keystore.key", "-----BEGIN PRIVATE KEY-----..."},
             {"ssl.keystore.certificate.chain", "-----BEGIN CERTIFICATE-----..."},
             {"ssl.endpoint.identification.algorithm", ""},
             {"sasl.enabled.mechanisms", "SCRAM-SHA-512"},
             {"sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"},
             {"inter.broker.sasl.username", "broker"},
             {"inter.broker.sasl.password.file", "/etc/ferry/secret/password"}};
  const auto c = parse_listeners(s);
  EXPECT_EQ(c.inter_broker_login.mechanism, "SCRAM-SHA-512");
  EXPECT_EQ(c.inter_broker_login.username, "broker");
  EXPECT_EQ(c.inter_broker_login.password_file, "/etc/ferry/secret/password");
  EXPECT_FALSE(c.listeners[0].tls.verify_peer_host);
  EXPECT_EQ(c.listeners[0].tls.keystore_key.substr(0, 11), "-----BEGIN ");

  s.erase("sasl.mechanism.inter.broker.protocol");  // Kafka's default, GSSAPI, is not served
  EXPECT_NE(error_of(s).find("sasl.mechanism.inter.broker.protocol"), std::string::npos);
  s["sasl.mechanism.inter.broker.protocol"] = "SCRAM-SHA-512";
  s.erase("inter.broker.sasl.username");
  EXPECT_NE(error_of(s).find("inter.broker.sasl.username"), std::string::npos);
}

TEST(listener_security, security_inter_broker_protocol_names_the_listener) {
  auto s = tls_and_sasl();
  s["security.inter.broker.protocol"] = "SSL";
  EXPECT_EQ(parse_listeners(s).inter_broker, "SSL");
  s["inter.broker.listener.name"] = "PLAINTEXT";
  EXPECT_NE(error_of(s).find("only one of"), std::string::npos);
}

TEST(listener_security, what_is_not_served_is_refused_by_name) {
  const auto refused = [](const std::string& key, const std::string& value, const std::string& expected) {
    auto s = tls_and_sasl();
    s[key] = value;
    const auto error = error_of(s);
    EXPECT_NE(error.find(expected), std::string::npos) << key << ": " << error;
  };
  refused("ssl.keystore.type", "JKS", "ssl.keystore.type");
  refused("listener.name.ssl.ssl.truststore.type", "PKCS12", "listener.name.ssl.ssl.truststore.type");
  refused("ssl.keystore.password", "secret", "ssl.keystore.password");
  refused("ssl.client.auth", "sometimes", "ssl.client.auth");
  refused("ssl.enabled.protocols", "TLSv1.1", "TLSv1.1");
  refused("ssl.protocol", "SSLv3", "ssl.protocol");
  refused("sasl.enabled.mechanisms", "GSSAPI", "GSSAPI");
  refused("sasl.enabled.mechanisms", "OAUTHBEARER", "OAUTHBEARER");
  refused("sasl.enabled.mechanisms", "DIGEST-MD5", "DIGEST-MD5");
  refused("listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config", "x", "sasl.jaas.config");
  refused("sasl.kerberos.service.name", "kafka", "Kerberos");
  refused("sasl.oauthbearer.jwks.endpoint.url", "https://x", "OAUTHBEARER");
  refused("delegation.token.secret.key", "x", "delegation tokens");
  refused("principal.builder.class", "x", "principal.builder.class");
  refused("ssl.keymanager.algorithm", "SunX509", "ssl.keymanager.algorithm");
  refused("listener.name.nosuch.ssl.keystore.location", "/x", "NOSUCH");
  refused("sasl.server.max.receive.size", "0", "sasl.server.max.receive.size");
}

TEST(listener_security, sasl_needs_named_mechanisms) {
  auto s = tls_and_sasl();
  s.erase("sasl.enabled.mechanisms");  // Kafka's default is GSSAPI
  EXPECT_NE(error_of(s).find("sasl.enabled.mechanisms"), std::string::npos);
}

TEST(listener_security, keystore_sources_are_exclusive_and_complete) {
  auto s = tls_and_sasl();
  s["ssl.keystore.key"] = "k";
  EXPECT_NE(error_of(s).find("not both"), std::string::npos);
  s.erase("ssl.keystore.location");
  EXPECT_NE(error_of(s).find("go together"), std::string::npos);
  s.erase("ssl.keystore.key");
  EXPECT_NE(error_of(s).find("ssl.keystore.location"), std::string::npos);
}

TEST(listener_security, recognises_its_settings) {
  EXPECT_TRUE(is_security_setting("ssl.keystore.location"));
  EXPECT_TRUE(is_security_setting("listener.name.external.ssl.client.auth"));
  EXPECT_TRUE(is_security_setting("sasl.jaas.config"));  // recognised so that it is refused by name
  EXPECT_FALSE(is_security_setting("log.dirs"));
  EXPECT_FALSE(is_security_setting("listener.name.external.log.dirs"));
}

}  // namespace
}  // namespace ferry::config

namespace ferry::config {
namespace {

std::string admin_error_of(const settings& s) {
  try {
    (void)read_admin_security(s);
  } catch (const config_exception& e) {
    return e.what();
  }
  return "";
}

TEST(admin_security, defaults_to_open_http) {
  const auto a = read_admin_security({});
  EXPECT_FALSE(a.https);
  EXPECT_FALSE(a.authenticates());
  EXPECT_EQ(a.exempt_paths, (std::vector<std::string>{"/metrics", "/v1/health", "/v1/ready"}));
  EXPECT_TRUE(is_admin_security_setting("admin.ssl.keystore.location"));
  EXPECT_TRUE(is_admin_security_setting("admin.authentication.exempt.paths"));
  EXPECT_FALSE(is_admin_security_setting("admin.sasl.enabled.mechanisms"));
  EXPECT_FALSE(is_admin_security_setting("admin.ssl.nosuch"));
}

TEST(admin_security, admin_settings_win_over_the_broker_wide_ones) {
  const auto a = read_admin_security({{"admin.listener.protocol", "HTTPS"},
                                      {"ssl.keystore.location", "/etc/ferry/broker.pem"},
                                      {"ssl.truststore.location", "/etc/ferry/ca.pem"},
                                      {"admin.ssl.truststore.location", "/etc/ferry/operators.pem"},
                                      {"ssl.client.auth", "required"},
                                      {"admin.ssl.principal.mapping.rules", "RULE:^CN=(.*)$/$1/"},
                                      {"admin.authentication", "basic, mtls"},
                                      {"admin.authentication.exempt.paths", "/v1/health"}});
  EXPECT_TRUE(a.https);
  EXPECT_TRUE(a.basic);
  EXPECT_TRUE(a.mtls);
  EXPECT_EQ(a.tls.keystore_location, "/etc/ferry/broker.pem");
  EXPECT_EQ(a.tls.truststore_location, "/etc/ferry/operators.pem");
  EXPECT_EQ(a.tls.client_authentication, client_auth::required);
  EXPECT_EQ(a.tls.principal_mapping_rules, "RULE:^CN=(.*)$/$1/");
  EXPECT_EQ(a.exempt_paths, std::vector<std::string>{"/v1/health"});
  EXPECT_FALSE(read_admin_security({{"admin.authentication", "none"}}).authenticates());
}

TEST(admin_security, refusals_name_the_setting) {
  const settings https{{"admin.listener.protocol", "https"}, {"admin.ssl.keystore.location", "/k.pem"}};
  const auto refused = [](settings s, const std::string& expected) {
    const auto error = admin_error_of(s);
    EXPECT_NE(error.find(expected), std::string::npos) << expected << ": " << error;
  };
  refused({{"admin.listener.protocol", "spdy"}}, "admin.listener.protocol");
  refused({{"admin.authentication", "basic,kerberos"}}, "admin.authentication");
  refused({{"admin.authentication", "mtls"}}, "admin.listener.protocol");
  refused({{"admin.listener.protocol", "https"}}, "admin.ssl.keystore.location");
  auto mtls = https;
  mtls["admin.authentication"] = "mtls";
  refused(mtls, "admin.ssl.truststore.location");
  mtls["admin.ssl.truststore.location"] = "/ca.pem";
  refused(mtls, "admin.ssl.client.auth");
  mtls["admin.ssl.client.auth"] = "requested";
  EXPECT_EQ(admin_error_of(mtls), "");
  refused({{"admin.ssl.keystore.location", "/k.pem"}}, "admin.ssl.keystore.location");
  refused({{"admin.authentication.exempt.paths", "metrics"}}, "admin.authentication.exempt.paths");
}

}  // namespace
}  // namespace ferry::config
