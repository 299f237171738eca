#include "users/user_secret.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace ferry::users {
namespace {

using json = nlohmann::json;

json user() { return {{"metadata", {{"name", "orders-app"}, {"namespace", "shop"}, {"uid", "u-1"}}}}; }

TEST(UserSecret, PasswordsAreLongRandomAndAlphanumeric) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    const auto password = generate_password();
    EXPECT_EQ(password.size(), 32U);
    EXPECT_TRUE(std::all_of(password.begin(), password.end(), [](char c) { return std::isalnum(c) != 0; }));
    seen.insert(password);
  }
  EXPECT_EQ(seen.size(), 50U);
}

TEST(UserSecret, TheSecretHoldsWhatAClientNeedsAndIsOwnedByTheUser) {
  const auto secret = user_secret(user(), "prod", "pw", {"ferry:9092", "SASL_SSL"}, "CLUSTER CA");
  EXPECT_EQ(secret["metadata"]["name"], "orders-app");
  EXPECT_EQ(secret["metadata"]["labels"]["ferry.dev/cluster"], "prod");
  EXPECT_EQ(secret["metadata"]["labels"]["ferry.dev/user"], "true");
  EXPECT_EQ(secret_value(secret, "password"), "pw");
  EXPECT_EQ(secret_value(secret, "sasl.jaas.config"),
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"orders-app\" "
            "password=\"pw\";");
  EXPECT_EQ(secret_value(secret, "sasl.mechanism"), "SCRAM-SHA-512");
  EXPECT_EQ(secret_value(secret, "bootstrap.servers"), "ferry:9092");
  EXPECT_EQ(secret_value(secret, "security.protocol"), "SASL_SSL");
  EXPECT_EQ(secret_value(secret, "ca.crt"), "CLUSTER CA");
  EXPECT_TRUE(owned_by(secret, user()));
  EXPECT_FALSE(owned_by(secret, json{{"metadata", {{"uid", "u-2"}}}}));
  EXPECT_TRUE(matches(secret, secret));
  EXPECT_FALSE(matches(secret, user_secret(user(), "prod", "pw", {}, "CLUSTER CA")));
  // A renewed CA's bundle is written again.
  EXPECT_FALSE(matches(secret, user_secret(user(), "prod", "pw", {"ferry:9092", "SASL_SSL"}, "NEW BUNDLE")));
  EXPECT_FALSE(secret_value(user_secret(user(), "prod", "pw", {}, ""), "ca.crt"));
  EXPECT_FALSE(secret_value(secret, "missing"));
}

TEST(UserSecret, ATlsUsersSecretHoldsItsCertificateKeyAndCa) {
  const auto secret = user_tls_secret(user(), "prod", "CERT", "KEY", "CA");
  EXPECT_EQ(secret_value(secret, "tls.crt"), "CERT");
  EXPECT_EQ(secret_value(secret, "tls.key"), "KEY");
  EXPECT_EQ(secret_value(secret, "ca.crt"), "CA");
  EXPECT_FALSE(secret_value(secret, "password"));
  EXPECT_TRUE(owned_by(secret, user()));
  EXPECT_EQ(secret["metadata"]["labels"]["ferry.dev/user"], "true");
}

TEST(UserSecret, QuotesInAPasswordAreEscapedAsJaasReadsThem) {
  EXPECT_EQ(sasl_jaas_config("u", R"(a"b\c)"),
            R"(org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="a\"b\\c";)");
}

}  // namespace
}  // namespace ferry::users
