#include "config/zookeeper_security.h"

#include <gtest/gtest.h>

#include "config/broker_config.h"
#include "config/tests/config_errors.h"

namespace ferry::config {
namespace {

const auto minimal = test::minimal_settings();

std::string error_of(std::map<std::string, std::string> settings) {
  return test::error_with_minimal_settings(std::move(settings));
}

TEST(zookeeper_security, anonymous_and_open_by_default) {
  const auto c = parse_broker_config(minimal).zookeeper_security;
  EXPECT_FALSE(c.set_acl);
  EXPECT_TRUE(c.digest_username.empty());
  EXPECT_TRUE(c.digest_password_file.empty());
}

TEST(zookeeper_security, identity_and_acls_are_read) {
  auto settings = minimal;
  settings["zookeeper.set.acl"] = "true";
  settings["zookeeper.digest.username"] = " ferry ";
  settings["zookeeper.digest.password.file"] = "/etc/ferry/zookeeper-password";
  const auto c = parse_broker_config(settings).zookeeper_security;
  EXPECT_TRUE(c.set_acl);
  EXPECT_EQ(c.digest_username, "ferry");
  EXPECT_EQ(c.digest_password_file, "/etc/ferry/zookeeper-password");
}

TEST(zookeeper_security, an_identity_without_set_acl_is_allowed) {
  // The first step of locking down a running cluster: every writer logs in before any node is locked.
  auto settings = minimal;
  settings["zookeeper.digest.username"] = "ferry";
  settings["zookeeper.digest.password.file"] = "/p";
  const auto c = parse_broker_config(settings).zookeeper_security;
  EXPECT_FALSE(c.set_acl);
  EXPECT_EQ(c.digest_username, "ferry");
}

TEST(zookeeper_security, set_acl_needs_an_identity) {
  const auto error = error_of({{"zookeeper.set.acl", "true"}});
  EXPECT_NE(error.find("'zookeeper.set.acl'"), std::string::npos) << error;
  EXPECT_NE(error.find("zookeeper.digest.username"), std::string::npos) << error;
}

TEST(zookeeper_security, username_and_password_file_go_together) {
  EXPECT_NE(error_of({{"zookeeper.digest.username", "ferry"}}).find("go together"), std::string::npos);
  EXPECT_NE(error_of({{"zookeeper.digest.password.file", "/p"}}).find("go together"), std::string::npos);
}

TEST(zookeeper_security, bad_values_are_named) {
  EXPECT_NE(error_of({{"zookeeper.set.acl", "yes"}}).find("'zookeeper.set.acl': must be true or false"),
            std::string::npos);
  const auto colon = error_of({{"zookeeper.digest.username", "a:b"}, {"zookeeper.digest.password.file", "/p"}});
  EXPECT_NE(colon.find("'zookeeper.digest.username': must not contain ':'"), std::string::npos) << colon;
}

TEST(zookeeper_security, kafkas_zookeeper_tls_and_jaas_settings_are_refused_by_name) {
  for (const char* key : {"zookeeper.ssl.client.enable", "zookeeper.clientCnxnSocket", "zookeeper.sasl.client",
                          "zookeeper.client.secure"}) {
    const auto error = error_of({{key, "true"}});
    EXPECT_NE(error.find(std::string("'") + key + "'"), std::string::npos) << key << ": " << error;
    EXPECT_EQ(error.find("unknown setting"), std::string::npos) << key << ": " << error;
  }
}

}  // namespace
}  // namespace ferry::config
