#include "config/authorizer_config.h"

#include <gtest/gtest.h>

#include "config/broker_config.h"
#include "config/tests/config_errors.h"

namespace ferry::config {
namespace {

const auto minimal = test::minimal_settings();

std::string error_of(std::map<std::string, std::string> settings) {
  return test::error_with_minimal_settings(std::move(settings));
}

TEST(authorizer_config, off_by_default) {
  const auto c = parse_broker_config(minimal);
  EXPECT_FALSE(c.authorizer.enabled);
  EXPECT_TRUE(c.authorizer.super_users.empty());
  EXPECT_FALSE(c.authorizer.allow_everyone_if_no_acl_found);
}

TEST(authorizer_config, kafkas_acl_authorizers_turn_it_on) {
  for (const char* name :
       {"kafka.security.authorizer.AclAuthorizer", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}) {
    auto s = minimal;
    s["authorizer.class.name"] = name;
    EXPECT_TRUE(parse_broker_config(s).authorizer.enabled) << name;
  }
  auto s = minimal;
  s["authorizer.class.name"] = "";
  EXPECT_FALSE(parse_broker_config(s).authorizer.enabled);
}

TEST(authorizer_config, another_class_is_refused_by_name) {
  const auto error = error_of({{"authorizer.class.name", "com.example.OpenDoorAuthorizer"}});
  EXPECT_NE(error.find("authorizer.class.name"), std::string::npos) << error;
  EXPECT_NE(error.find("com.example.OpenDoorAuthorizer"), std::string::npos) << error;
}

TEST(authorizer_config, super_users_are_separated_by_semicolons) {
  auto s = minimal;
  s["authorizer.class.name"] = "kafka.security.authorizer.AclAuthorizer";
  s["super.users"] = "User:admin; User:CN=broker,O=ferry ;;";
  s["allow.everyone.if.no.acl.found"] = "true";
  const auto c = parse_broker_config(s);
  EXPECT_EQ(c.authorizer.super_users, (std::vector<std::string>{"User:admin", "User:CN=broker,O=ferry"}));
  EXPECT_TRUE(c.authorizer.allow_everyone_if_no_acl_found);
}

TEST(authorizer_config, bad_values_name_their_setting) {
  const std::string on = "kafka.security.authorizer.AclAuthorizer";
  EXPECT_NE(error_of({{"authorizer.class.name", on}, {"super.users", "admin"}}).find("super.users"), std::string::npos);
  EXPECT_NE(error_of({{"authorizer.class.name", on}, {"allow.everyone.if.no.acl.found", "yes"}})
                .find("allow.everyone.if.no.acl.found"),
            std::string::npos);
  // Without an authorizer they would do nothing: refused rather than ignored.
  EXPECT_NE(error_of({{"super.users", "User:admin"}}).find("without authorizer.class.name"), std::string::npos);
  EXPECT_NE(error_of({{"allow.everyone.if.no.acl.found", "false"}}).find("without authorizer.class.name"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::config
