#include "manager/options.h"

#include <gtest/gtest.h>

namespace ferry::manager {
namespace {

std::vector<std::string> with_required(std::vector<std::string> args) {
  args.insert(args.begin(), {"--cluster-name", "prod", "--zookeeper-connect", "zk:2181"});
  return args;
}

TEST(options, watch_namespaces_is_a_comma_separated_list) {
  const auto parsed = parse_options(with_required({"--watch-namespaces", "shop,billing-2"}));
  ASSERT_TRUE(parsed.parsed) << parsed.error;
  EXPECT_EQ(parsed.parsed->watch_namespaces, (std::vector<std::string>{"shop", "billing-2"}));
  EXPECT_TRUE(parse_options(with_required({})).parsed->watch_namespaces.empty());
  for (const auto* bad : {"", "shop,", "Shop", "a b", "-shop"}) {
    const auto refused = parse_options(with_required({"--watch-namespaces", bad}));
    EXPECT_FALSE(refused.parsed) << bad;
    EXPECT_NE(refused.error.find("--watch-namespaces"), std::string::npos) << refused.error;
  }
}

TEST(options, zero_moves_with_a_broker_statefulset_is_valid) {
  const auto parsed =
      parse_options(with_required({"--max-concurrent-moves", "0", "--broker-statefulset", "ferry/ferry-broker"}));
  ASSERT_TRUE(parsed.parsed) << parsed.error;
  EXPECT_EQ(parsed.parsed->max_concurrent_moves, 0U);
  EXPECT_EQ(parsed.parsed->broker_statefulset, "ferry/ferry-broker");
}

TEST(options, kafka_connection_flags) {
  const auto parsed = parse_options(
      with_required({"--kafka-listener", "INTERNAL", "--kafka-security-protocol", "SASL_SSL", "--kafka-sasl-mechanism",
                     "SCRAM-SHA-256", "--kafka-sasl-username", "ferry-operator", "--kafka-sasl-password-file",
                     "/secret/password", "--kafka-ssl-ca-file", "/ca/ca.crt", "--kafka-ssl-verify-hostname", "false"}));
  ASSERT_TRUE(parsed.parsed) << parsed.error;
  const auto& kafka = parsed.parsed->kafka;
  EXPECT_EQ(kafka.listener, "INTERNAL");
  EXPECT_TRUE(kafka.uses_tls() && kafka.uses_sasl());
  EXPECT_EQ(kafka.sasl_mechanism, "SCRAM-SHA-256");
  EXPECT_EQ(kafka.sasl_password_file, "/secret/password");
  EXPECT_FALSE(kafka.ssl_verify_hostname);
  EXPECT_EQ(parse_options(with_required({})).parsed->kafka.security_protocol, "PLAINTEXT");
  // Settings that do not fit together stop startup, naming the flag.
  const auto refused = parse_options(with_required({"--kafka-security-protocol", "SASL_SSL"}));
  EXPECT_FALSE(refused.parsed);
  EXPECT_NE(refused.error.find("--kafka-sasl-username"), std::string::npos) << refused.error;
  EXPECT_NE(parse_options(with_required({"--kafka-ssl-verify-hostname", "no"})).error.find("must be true or false"),
            std::string::npos);
}

TEST(options, certificate_authorities_and_lifetimes) {
  const auto parsed = parse_options(
      with_required({"--clients-ca-secret", "ferry/clients-ca", "--cluster-ca-secret", "ferry/cluster-ca",
                     "--broker-certificate-secret", "ferry/broker-tls", "--broker-certificate-addresses",
                     "*.b.ferry.svc,ferry-bootstrap,10.0.0.7", "--certificate-validity", "90d", "--certificate-renewal",
                     "10d", "--ca-validity", "30m", "--ca-renewal", "10m", "--ca-trust-propagation", "90s"}));
  ASSERT_TRUE(parsed.parsed) << parsed.error;
  const auto& o = *parsed.parsed;
  EXPECT_EQ(o.clients_ca_secret, "ferry/clients-ca");
  EXPECT_EQ(o.cluster_ca_secret, "ferry/cluster-ca");
  EXPECT_EQ(o.broker_certificate_secret, "ferry/broker-tls");
  EXPECT_EQ(o.broker_certificate_addresses, (std::vector<std::string>{"*.b.ferry.svc", "ferry-bootstrap", "10.0.0.7"}));
  EXPECT_EQ(o.broker_certificate_common_name, "prod-broker");
  EXPECT_EQ(o.certificate_validity, std::chrono::hours(24 * 90));
  EXPECT_EQ(o.certificate_renewal, std::chrono::hours(24 * 10));
  EXPECT_EQ(o.ca_timing.validity, std::chrono::minutes(30));
  EXPECT_EQ(o.ca_timing.renew_before, std::chrono::minutes(10));
  EXPECT_EQ(o.ca_timing.trust_propagation, std::chrono::seconds(90));
  EXPECT_TRUE(parse_options(with_required({})).parsed->clients_ca_secret.empty());
  EXPECT_TRUE(o.make_clients_ca && o.make_cluster_ca);
  const auto brought = parse_options(with_required({"--make-cluster-ca", "false"}));
  ASSERT_TRUE(brought.parsed) << brought.error;
  EXPECT_FALSE(brought.parsed->make_cluster_ca);
  EXPECT_TRUE(brought.parsed->make_clients_ca);

  const auto refused = [](std::vector<std::string> flags, const std::string& why) {
    const auto error = parse_options(with_required(std::move(flags))).error;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  };
  refused({"--clients-ca-secret", "clients-ca"}, "namespace/name");
  refused({"--make-clients-ca", "no"}, "--make-clients-ca no: must be true or false");
  refused({"--certificate-validity", "10"}, "--certificate-validity 10: must be a whole number and s, m, h or d");
  refused({"--ca-renewal", "2w"}, "--ca-renewal 2w: must be");
  // Renewal must come before the end, and a CA's successor must sign before the CA ends.
  refused({"--certificate-validity", "10d", "--certificate-renewal", "10d"}, "--certificate-renewal must be less");
  refused({"--ca-validity", "10d", "--ca-renewal", "11d"}, "--ca-renewal must be less");
  refused({"--ca-renewal", "1d", "--ca-trust-propagation", "1d"}, "--ca-trust-propagation must be less");
  refused({"--broker-certificate-secret", "a/b", "--broker-certificate-addresses", "x"}, "needs --cluster-ca-secret");
  refused({"--broker-certificate-secret", "a/b", "--cluster-ca-secret", "a/c"}, "needs --broker-certificate-addresses");
}

TEST(options, zookeeper_identity_and_acls) {
  const auto parsed =
      parse_options(with_required({"--zookeeper-digest-username", "ferry", "--zookeeper-digest-password-file",
                                   "/secret/zookeeper-password", "--zookeeper-set-acl", "true"}));
  ASSERT_TRUE(parsed.parsed) << parsed.error;
  EXPECT_EQ(parsed.parsed->zookeeper_digest_username, "ferry");
  EXPECT_EQ(parsed.parsed->zookeeper_digest_password_file, "/secret/zookeeper-password");
  EXPECT_TRUE(parsed.parsed->zookeeper_set_acl);
  EXPECT_FALSE(parse_options(with_required({})).parsed->zookeeper_set_acl);
  EXPECT_NE(parse_options(with_required({"--zookeeper-set-acl", "true"})).error.find("--zookeeper-digest-username"),
            std::string::npos);
  EXPECT_NE(parse_options(with_required({"--zookeeper-digest-username", "ferry"})).error.find("go together"),
            std::string::npos);
  EXPECT_EQ(parse_options(with_required({"--zookeeper-digest-username", "a:b"})).error,
            "--zookeeper-digest-username a:b: must not contain ':'");
}

TEST(options, metrics_auth) {
  EXPECT_FALSE(parse_options(with_required({})).parsed->metrics_auth);
  EXPECT_TRUE(parse_options(with_required({"--metrics-auth", "kubernetes"})).parsed->metrics_auth);
  EXPECT_FALSE(parse_options(with_required({"--metrics-auth", "none"})).parsed->metrics_auth);
  const auto refused = parse_options(with_required({"--metrics-auth", "token"}));
  EXPECT_FALSE(refused.parsed);
  EXPECT_EQ(refused.error, "--metrics-auth token: must be kubernetes or none");
}

TEST(options, default_deletion_policy) {
  EXPECT_FALSE(parse_options(with_required({})).parsed->retain_by_default);
  EXPECT_TRUE(parse_options(with_required({"--default-deletion-policy", "retain"})).parsed->retain_by_default);
  EXPECT_FALSE(parse_options(with_required({"--default-deletion-policy", "delete"})).parsed->retain_by_default);
  const auto refused = parse_options(with_required({"--default-deletion-policy", "keep"}));
  EXPECT_FALSE(refused.parsed);
  EXPECT_NE(refused.error.find("delete or retain"), std::string::npos);
}

}  // namespace
}  // namespace ferry::manager
