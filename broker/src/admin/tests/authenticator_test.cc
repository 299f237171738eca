#include "admin/authenticator.h"

#include <gtest/gtest.h>

#include <future>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "admin/tests/admin_test_support.h"
#include "security/scram_credential.h"
#include "security/testing/test_certificates.h"

namespace ferry::admin {
namespace {

using security::scram_mechanism;

std::string basic(const std::string& user, const std::string& password) {
  return "Basic " + security::base64_encode(user + ":" + password);
}

double count(prometheus::Registry& registry, const std::string& method, const std::string& result) {
  for (const auto& family : registry.Collect()) {
    if (family.name != "ferry_admin_authentications_total") continue;
    for (const auto& metric : family.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& l : metric.label) labels[l.name] = l.value;
      if (labels["method"] == method && labels["result"] == result) return metric.counter.value;
    }
  }
  return -1;
}

class authenticator_test : public ::testing::Test {
 protected:
  authenticator_test() {
    users_.add("alice", scram_mechanism::sha256, "alice-secret");
    users_.add("bob", scram_mechanism::sha256, "old-password");
    users_.add("bob", scram_mechanism::sha512, "bob-secret");
  }

  std::unique_ptr<authenticator> make(const config::admin_api_security& settings) {
    auto made = authenticator::create(settings, users_, checker_, registry_);
    EXPECT_TRUE(made) << (made ? "" : made.error());
    return std::move(made).value();
  }

  authentication run(authenticator& auth, request_credentials credentials) {
    boost::asio::io_context io;
    auto done = boost::asio::co_spawn(io, auth.authenticate(credentials), boost::asio::use_future);
    io.run();
    return done.get();
  }

  testing::fake_users users_;
  testing::inline_checker checker_;
  prometheus::Registry registry_;
};

TEST_F(authenticator_test, basic_accepts_the_scram_password) {
  auto auth = make({.basic = true});
  const auto alice = run(*auth, {.authorization = basic("alice", "alice-secret"), .client = "10.0.0.1:5000"});
  EXPECT_EQ(alice.result, authentication::outcome::allowed);
  EXPECT_EQ(alice.principal, "alice");
  // A user with both credentials is checked against SCRAM-SHA-512's.
  EXPECT_EQ(run(*auth, {.authorization = basic("bob", "bob-secret")}).result, authentication::outcome::allowed);
  EXPECT_EQ(run(*auth, {.authorization = basic("bob", "old-password")}).result, authentication::outcome::refused);
  // The scheme is case-insensitive; the password may hold colons.
  users_.add("carol", scram_mechanism::sha512, "a:b:c");
  EXPECT_EQ(run(*auth, {.authorization = "bAsIc " + security::base64_encode("carol:a:b:c")}).result,
            authentication::outcome::allowed);
  EXPECT_EQ(count(registry_, "basic", "success"), 3);
  EXPECT_EQ(count(registry_, "basic", "failure"), 1);
}

TEST_F(authenticator_test, wrong_password_and_unknown_user_are_failed_logins) {
  auto auth = make({.basic = true});
  const auto wrong = run(*auth, {.authorization = basic("alice", "guess")});
  EXPECT_EQ(wrong.result, authentication::outcome::refused);
  EXPECT_TRUE(wrong.failed_login);
  EXPECT_TRUE(wrong.principal.empty());
  const auto checks = checker_.checks;
  const auto unknown = run(*auth, {.authorization = basic("mallory", "x")});
  EXPECT_EQ(unknown.result, authentication::outcome::refused);
  EXPECT_TRUE(unknown.failed_login);
  EXPECT_EQ(checker_.checks, checks);                                           // nothing to check against
  for (const auto* header : {"Bearer abc", "Basic !!!", "Basic bm9jb2xvbg=="})  // "nocolon"
    EXPECT_TRUE(run(*auth, {.authorization = header}).failed_login) << header;
  EXPECT_EQ(count(registry_, "basic", "failure"), 5);
  // No credentials at all: the challenge, not a failed login.
  const auto none = run(*auth, {});
  EXPECT_EQ(none.result, authentication::outcome::refused);
  EXPECT_FALSE(none.failed_login);
  EXPECT_EQ(count(registry_, "basic", "failure"), 5);
}

TEST_F(authenticator_test, exempt_paths_stay_open) {
  auto auth = make({.basic = true});
  EXPECT_FALSE(auth->protects("/metrics"));
  EXPECT_FALSE(auth->protects("/v1/health"));
  EXPECT_FALSE(auth->protects("/v1/ready"));
  EXPECT_TRUE(auth->protects("/v1/brokers"));
  EXPECT_TRUE(auth->protects("/v1/ready/"));
  EXPECT_TRUE(auth->protects("/metrics/x"));
  auto strict = make({.basic = true, .exempt_paths = {}});
  EXPECT_TRUE(strict->protects("/metrics"));
  auto open = make({});
  EXPECT_FALSE(open->protects("/v1/brokers"));
}

TEST_F(authenticator_test, mtls_takes_the_certificates_mapped_subject) {
  config::admin_api_security settings{.https = true, .mtls = true};
  settings.tls.principal_mapping_rules = "RULE:^CN=([^,]*),OU=Operators,.*$/$1/L";
  auto auth = make(settings);
  const security::testing::test_ca ca;
  const auto operator_certificate = ca.client_certificate("/O=Acme/OU=Operators/CN=Ferry-Operator");
  const auto other = ca.client_certificate("/O=Acme/OU=Apps/CN=app");
  const auto allowed = run(*auth, {.certificate = operator_certificate.certificate()});
  EXPECT_EQ(allowed.result, authentication::outcome::allowed);
  EXPECT_EQ(allowed.principal, "ferry-operator");
  const auto refused = run(*auth, {.certificate = other.certificate()});
  EXPECT_EQ(refused.result, authentication::outcome::refused);
  EXPECT_EQ(count(registry_, "mtls", "success"), 1);
  EXPECT_EQ(count(registry_, "mtls", "failure"), 1);
  // Basic is not on: a password does not help.
  EXPECT_EQ(run(*auth, {.authorization = basic("alice", "alice-secret")}).result, authentication::outcome::refused);
}

TEST_F(authenticator_test, either_method_when_both_are_on) {
  config::admin_api_security settings{.https = true, .basic = true, .mtls = true};
  auto auth = make(settings);
  const security::testing::test_ca ca;
  const auto client = ca.client_certificate("/CN=ops");
  EXPECT_EQ(run(*auth, {.certificate = client.certificate()}).principal, "CN=ops");
  EXPECT_EQ(run(*auth, {.authorization = basic("alice", "alice-secret")}).principal, "alice");
  EXPECT_TRUE(auth->challenges_basic());
}

TEST_F(authenticator_test, bad_mapping_rules_are_refused_by_name) {
  config::admin_api_security settings{.https = true, .mtls = true};
  settings.tls.principal_mapping_rules = "RULE:(";
  const auto made = authenticator::create(settings, users_, checker_, registry_);
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().find("admin.ssl.principal.mapping.rules"), std::string::npos) << made.error();
}

}  // namespace
}  // namespace ferry::admin
