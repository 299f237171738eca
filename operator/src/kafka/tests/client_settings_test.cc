#include "kafka/client_settings.h"

#include <gtest/gtest.h>

#include "security/testing/test_certificates.h"

namespace ferry::kafka {
namespace {

using security::testing::temporary_directory;
using security::testing::test_ca;
using security::testing::write_file;

client_settings sasl_ssl(const std::string& password_file) {
  client_settings s;
  s.security_protocol = "SASL_SSL";
  s.sasl_username = "ferry-operator";
  s.sasl_password_file = password_file;
  return s;
}

TEST(ClientSettings, PlaintextWithoutFilesIsTheDefaultAndFits) {
  EXPECT_EQ(check_settings({}), "");
  auto peer = read_peer_security({});
  ASSERT_TRUE(peer) << peer.error();
  EXPECT_FALSE(peer.value().tls);
  EXPECT_TRUE(peer.value().sasl_mechanism.empty());
}

TEST(ClientSettings, SettingsThatDoNotFitAreRefusedByFlag) {
  client_settings s;
  s.security_protocol = "SASL_SSL";
  EXPECT_NE(check_settings(s).find("needs --kafka-sasl-username and --kafka-sasl-password-file"), std::string::npos);
  s = {};
  s.security_protocol = "TLS";
  EXPECT_NE(check_settings(s).find("--kafka-security-protocol TLS: must be"), std::string::npos);
  s = sasl_ssl("/p");
  s.sasl_mechanism = "GSSAPI";
  EXPECT_NE(check_settings(s).find("--kafka-sasl-mechanism GSSAPI"), std::string::npos);
  s = {};
  s.sasl_username = "u";
  EXPECT_NE(check_settings(s).find("need --kafka-security-protocol SASL_PLAINTEXT or SASL_SSL"), std::string::npos);
  s = sasl_ssl("/p");
  s.ssl_certificate_file = "/c";
  EXPECT_NE(check_settings(s).find("go together"), std::string::npos);
  s = {};
  s.ssl_ca_file = "/ca";
  EXPECT_NE(check_settings(s).find("need --kafka-security-protocol SSL or SASL_SSL"), std::string::npos);
  EXPECT_EQ(check_settings(sasl_ssl("/p")), "");
}

TEST(ClientSettings, TheLoginAndTlsComeFromTheFilesAsTheyAreNow) {
  const temporary_directory dir;
  const test_ca ca;
  const auto password = write_file(dir.path(), "password", "s3cret\n");
  auto s = sasl_ssl(password.string());
  s.ssl_ca_file = write_file(dir.path(), "ca.crt", ca.ca().certificate_pem()).string();
  const auto client = ca.client_certificate("/CN=ferry-operator");
  s.ssl_certificate_file = write_file(dir.path(), "tls.crt", client.certificate_pem()).string();
  s.ssl_key_file = write_file(dir.path(), "tls.key", client.key_pem()).string();
  auto peer = read_peer_security(s);
  ASSERT_TRUE(peer) << peer.error();
  ASSERT_TRUE(peer.value().tls);
  EXPECT_NE(peer.value().tls(), nullptr);
  EXPECT_EQ(peer.value().sasl_mechanism, "SCRAM-SHA-512");
  EXPECT_EQ(peer.value().client_id, "ferry-operator");
  EXPECT_EQ(peer.value().login_setting, "--kafka-sasl-username");
  // The first line only: a Secret's value may end with a newline.
  std::string read;
  ASSERT_TRUE(read_password(s, read));
  EXPECT_EQ(read, "s3cret");
  auto first = peer.value().sasl_exchange()->first_token();
  EXPECT_NE(first.find("n=ferry-operator,"), std::string::npos) << first;
}

TEST(ClientSettings, AFileThatCannotBeUsedIsNamedByItsFlag) {
  const temporary_directory dir;
  auto s = sasl_ssl((dir.path() / "missing").string());
  auto peer = read_peer_security(s);
  ASSERT_FALSE(peer);
  EXPECT_NE(peer.error().find("--kafka-sasl-password-file"), std::string::npos) << peer.error();
  s.sasl_password_file = write_file(dir.path(), "empty", "\n").string();
  std::string empty;
  EXPECT_NE(read_password(s, empty).error().find("is empty"), std::string::npos);
  s.sasl_password_file = write_file(dir.path(), "password", "pw").string();
  s.ssl_ca_file = (dir.path() / "no-ca.crt").string();
  peer = read_peer_security(s);
  ASSERT_FALSE(peer);
  EXPECT_NE(peer.error().find("--kafka-ssl-ca-file"), std::string::npos) << peer.error();
  s.ssl_ca_file = write_file(dir.path(), "ca.crt", "not a certificate").string();
  peer = read_peer_security(s);
  ASSERT_FALSE(peer);
  EXPECT_NE(peer.error().find("--kafka-ssl-*"), std::string::npos) << peer.error();
}

}  // namespace
}  // namespace ferry::kafka
