// TLS contexts from a listener's settings (and their refusals, each naming its setting), real handshakes over
// loopback, and the renewal of a listener's context when its files or settings change.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include "security/principal_mapper.h"
#include "security/testing/test_certificates.h"
#include "security/tls_context.h"
#include "security/tls_context_source.h"

namespace ferry::security {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using testing::test_ca;
using testing::test_certificate;

constexpr std::string_view prefix = "listener.name.external.";

class TlsTest : public ::testing::Test {
 protected:
  // A listener's settings with the keystore in a file (key, then chain).
  config::tls_settings server_settings(const test_certificate& leaf, std::string_view file = "keystore.pem") {
    config::tls_settings settings;
    settings.keystore_location = testing::write_file(dir_.path(), file, testing::keystore_pem(leaf)).string();
    return settings;
  }
  config::tls_settings mtls_settings(const test_certificate& leaf, config::client_auth auth) {
    auto settings = server_settings(leaf);
    settings.truststore_location = testing::write_file(dir_.path(), "truststore.pem", ca_.ca().certificate_pem());
    settings.client_authentication = auth;
    return settings;
  }
  // A client trusting the test CA, presenting `client` when given.
  std::shared_ptr<asio::ssl::context> client_context(const test_certificate* client = nullptr) {
    config::tls_settings settings;
    settings.truststore_certificates = ca_.ca().certificate_pem();
    if (client != nullptr) {
      settings.keystore_key = client->key_pem();
      settings.keystore_certificate_chain = client->certificate_pem();
    }
    auto context = make_client_context(settings, "");
    EXPECT_TRUE(context) << (context ? "" : context.error());
    return context.value();
  }
  std::string refusal(const config::tls_settings& settings) {
    auto context = make_server_context(settings, prefix);
    EXPECT_FALSE(context);
    return context ? "" : context.error();
  }

  testing::temporary_directory dir_;
  test_ca ca_;
  test_certificate server_ = ca_.server_certificate();
};

struct handshake_outcome {
  boost::system::error_code server;
  boost::system::error_code client;  // the handshake's, or the first read's (TLS 1.3 refuses a client after it)
  std::string client_subject;        // the client certificate the server saw, as a distinguished name
  x509_ptr server_certificate;       // what the client saw
  std::string cipher;
  std::string version;
};

// One connection over loopback: both handshakes, then one byte from the server to the client.
handshake_outcome handshake(asio::ssl::context& server_context, asio::ssl::context& client_context) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  asio::ssl::stream<tcp::socket> client(io, client_context);
  client.next_layer().connect(acceptor.local_endpoint());
  asio::ssl::stream<tcp::socket> server(acceptor.accept(), server_context);
  SSL_set1_host(client.native_handle(), "localhost");
  SSL_set_tlsext_host_name(client.native_handle(), "localhost");

  handshake_outcome out;
  char byte = 'x';
  char received = 0;
  server.async_handshake(asio::ssl::stream_base::server, [&](boost::system::error_code ec) {
    out.server = ec;
    if (ec) {
      server.next_layer().close();
      return;
    }
    if (X509* peer = SSL_get0_peer_certificate(server.native_handle())) out.client_subject = distinguished_name(peer);
    asio::async_write(server, asio::buffer(&byte, 1), [](boost::system::error_code, std::size_t) {});
  });
  client.async_handshake(asio::ssl::stream_base::client, [&](boost::system::error_code ec) {
    if (ec) {
      out.client = ec;
      return;
    }
    out.server_certificate.reset(SSL_get1_peer_certificate(client.native_handle()));
    out.cipher = SSL_get_cipher_name(client.native_handle());
    out.version = SSL_get_version(client.native_handle());
    asio::async_read(client, asio::buffer(&received, 1),
                     [&](boost::system::error_code read_error, std::size_t) { out.client = read_error; });
  });
  io.run_for(std::chrono::seconds(20));
  return out;
}

bool presents(const handshake_outcome& out, const test_certificate& expected) {
  return out.server_certificate && X509_cmp(out.server_certificate.get(), expected.certificate()) == 0;
}

TEST_F(TlsTest, ServerContextFromKeystoreFile) {
  auto context = make_server_context(server_settings(server_), prefix);
  ASSERT_TRUE(context) << context.error();
  auto out = handshake(*context.value(), *client_context());
  EXPECT_FALSE(out.server) << out.server.message();
  EXPECT_FALSE(out.client) << out.client.message();
  EXPECT_TRUE(presents(out, server_));
  EXPECT_EQ(out.client_subject, "");
  const auto not_after = certificate_not_after(*context.value());
  ASSERT_TRUE(not_after);
  EXPECT_GT(*not_after, std::chrono::system_clock::now() + std::chrono::hours(24));
}

TEST_F(TlsTest, ServerContextFromInlinePemWithEncryptedKey) {
  config::tls_settings settings;
  settings.keystore_key = server_.key_pem("s3cret");
  settings.keystore_certificate_chain = server_.certificate_pem() + ca_.ca().certificate_pem();
  settings.key_password = "s3cret";
  auto context = make_server_context(settings, prefix);
  ASSERT_TRUE(context) << context.error();
  auto out = handshake(*context.value(), *client_context());
  EXPECT_FALSE(out.client) << out.client.message();
  EXPECT_TRUE(presents(out, server_));
}

TEST_F(TlsTest, RefusalsNameTheSetting) {
  config::tls_settings missing;
  missing.keystore_location = (dir_.path() / "absent.pem").string();
  EXPECT_NE(refusal(missing).find("listener.name.external.ssl.keystore.location: cannot read"), std::string::npos);

  config::tls_settings nothing;
  EXPECT_NE(refusal(nothing).find("listener.name.external.ssl.keystore.location: not set"), std::string::npos);

  config::tls_settings key_only;
  key_only.keystore_location = testing::write_file(dir_.path(), "key.pem", server_.key_pem()).string();
  EXPECT_NE(refusal(key_only).find("listener.name.external.ssl.keystore.location: no certificate"), std::string::npos);

  config::tls_settings chain_only;
  chain_only.keystore_certificate_chain = server_.certificate_pem();
  EXPECT_NE(refusal(chain_only).find("listener.name.external.ssl.keystore.key: not set"), std::string::npos);

  config::tls_settings no_key;
  no_key.keystore_location = testing::write_file(dir_.path(), "cert.pem", server_.certificate_pem()).string();
  EXPECT_NE(refusal(no_key).find("listener.name.external.ssl.keystore.location: no private key"), std::string::npos);

  const test_certificate other = ca_.server_certificate();
  config::tls_settings mismatch;
  mismatch.keystore_key = other.key_pem();
  mismatch.keystore_certificate_chain = server_.certificate_pem();
  const std::string mismatch_refusal = refusal(mismatch);
  EXPECT_NE(mismatch_refusal.find("listener.name.external.ssl.keystore.key: the private key does not match the "
                                  "certificate CN=localhost in listener.name.external.ssl.keystore.certificate.chain"),
            std::string::npos)
      << mismatch_refusal;

  const std::string expired = refusal(server_settings(ca_.expired_certificate()));
  EXPECT_NE(expired.find("listener.name.external.ssl.keystore.location: the certificate CN=localhost expired at 20"),
            std::string::npos)
      << expired;

  testing::certificate_options future;
  future.not_before = std::chrono::hours(24);
  const std::string early = refusal(server_settings(ca_.issue(future)));
  EXPECT_NE(
      early.find("listener.name.external.ssl.keystore.location: the certificate CN=localhost is not valid before"),
      std::string::npos)
      << early;

  config::tls_settings encrypted;
  encrypted.keystore_location =
      testing::write_file(dir_.path(), "encrypted.pem", testing::keystore_pem(server_, "pw")).string();
  EXPECT_NE(refusal(encrypted).find("the private key is encrypted and listener.name.external.ssl.key.password is not"),
            std::string::npos);
  encrypted.key_password = "wrong";
  EXPECT_NE(refusal(encrypted).find("cannot decrypt the private key with listener.name.external.ssl.key.password"),
            std::string::npos);

  auto required = server_settings(server_);
  required.client_authentication = config::client_auth::required;
  EXPECT_NE(refusal(required).find("listener.name.external.ssl.client.auth: required needs a truststore"),
            std::string::npos);
  required.truststore_location = (dir_.path() / "absent-truststore.pem").string();
  EXPECT_NE(refusal(required).find("listener.name.external.ssl.truststore.location: cannot read"), std::string::npos);

  auto old_protocol = server_settings(server_);
  old_protocol.enabled_protocols = {"TLSv1.2", "TLSv1.1"};
  EXPECT_NE(refusal(old_protocol).find("listener.name.external.ssl.enabled.protocols: TLSv1.1 is not supported"),
            std::string::npos);

  auto unknown_suite = server_settings(server_);
  unknown_suite.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_MADE_UP_WITH_ROT13"};
  EXPECT_NE(refusal(unknown_suite)
                .find("listener.name.external.ssl.cipher.suites: unknown cipher suite "
                      "TLS_MADE_UP_WITH_ROT13"),
            std::string::npos);

  auto suites_for_no_protocol = server_settings(server_);
  suites_for_no_protocol.enabled_protocols = {"TLSv1.3"};
  suites_for_no_protocol.cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"};
  EXPECT_NE(refusal(suites_for_no_protocol).find("listener.name.external.ssl.cipher.suites: no suite listed"),
            std::string::npos);
}

TEST_F(TlsTest, ProtocolsAndCipherSuitesByKafkasNames) {
  auto tls12 = server_settings(server_);
  tls12.cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"};
  auto context = make_server_context(tls12, prefix);
  ASSERT_TRUE(context) << context.error();
  auto out = handshake(*context.value(), *client_context());
  EXPECT_FALSE(out.client) << out.client.message();
  EXPECT_EQ(out.version, "TLSv1.2");
  EXPECT_EQ(out.cipher, "ECDHE-ECDSA-AES256-GCM-SHA384");

  auto tls13 = server_settings(server_);
  tls13.cipher_suites = {"TLS_CHACHA20_POLY1305_SHA256"};
  context = make_server_context(tls13, prefix);
  ASSERT_TRUE(context) << context.error();
  out = handshake(*context.value(), *client_context());
  EXPECT_FALSE(out.client) << out.client.message();
  EXPECT_EQ(out.version, "TLSv1.3");
  EXPECT_EQ(out.cipher, "TLS_CHACHA20_POLY1305_SHA256");

  auto openssl_name = server_settings(server_);
  openssl_name.cipher_suites = {"ECDHE-ECDSA-AES128-GCM-SHA256"};
  EXPECT_TRUE(make_server_context(openssl_name, prefix));

  // A TLS 1.3 listener refuses a TLS 1.2 client.
  auto only13 = server_settings(server_);
  only13.enabled_protocols = {"TLSv1.3"};
  context = make_server_context(only13, prefix);
  ASSERT_TRUE(context) << context.error();
  config::tls_settings client12;
  client12.truststore_certificates = ca_.ca().certificate_pem();
  client12.enabled_protocols = {"TLSv1.2"};
  auto client = make_client_context(client12, "");
  ASSERT_TRUE(client) << client.error();
  out = handshake(*context.value(), *client.value());
  EXPECT_TRUE(out.server);
  EXPECT_TRUE(out.client);
}

TEST_F(TlsTest, ClientCertificateRequired) {
  auto context = make_server_context(mtls_settings(server_, config::client_auth::required), prefix);
  ASSERT_TRUE(context) << context.error();

  const test_certificate alice = ca_.client_certificate("/C=US/O=Acme/OU=Users/CN=alice");
  auto out = handshake(*context.value(), *client_context(&alice));
  EXPECT_FALSE(out.server) << out.server.message();
  EXPECT_FALSE(out.client) << out.client.message();
  EXPECT_EQ(out.client_subject, "CN=alice,OU=Users,O=Acme,C=US");

  out = handshake(*context.value(), *client_context());
  EXPECT_TRUE(out.server) << "a client without a certificate must be refused";
  EXPECT_TRUE(out.client);

  const test_ca stranger("/CN=Someone else's CA");
  const test_certificate mallory = stranger.client_certificate("/CN=mallory");
  out = handshake(*context.value(), *client_context(&mallory));
  EXPECT_TRUE(out.server) << "an untrusted client certificate must be refused";
  EXPECT_TRUE(out.client);
  EXPECT_EQ(out.client_subject, "");
}

TEST_F(TlsTest, ClientCertificateRequested) {
  auto context = make_server_context(mtls_settings(server_, config::client_auth::requested), prefix);
  ASSERT_TRUE(context) << context.error();
  auto out = handshake(*context.value(), *client_context());
  EXPECT_FALSE(out.server) << out.server.message();
  EXPECT_EQ(out.client_subject, "");

  const test_certificate bob = ca_.client_certificate("/O=Acme/CN=bob");
  out = handshake(*context.value(), *client_context(&bob));
  EXPECT_FALSE(out.server) << out.server.message();
  EXPECT_EQ(out.client_subject, "CN=bob,O=Acme");

  const test_ca stranger("/CN=Someone else's CA");
  const test_certificate mallory = stranger.client_certificate("/CN=mallory");
  out = handshake(*context.value(), *client_context(&mallory));
  EXPECT_TRUE(out.server) << "an untrusted certificate fails even when only requested";
}

TEST_F(TlsTest, ClientContextRefusesAServerItDoesNotTrust) {
  const test_ca stranger("/CN=Someone else's CA");
  auto context = make_server_context(server_settings(stranger.server_certificate()), prefix);
  ASSERT_TRUE(context) << context.error();
  auto out = handshake(*context.value(), *client_context());
  EXPECT_TRUE(out.client);
}

// Kubernetes mounts a Secret as symlinks into a timestamped directory and swaps one symlink to update it.
void publish(const std::filesystem::path& dir, const std::string& version, const std::string& keystore) {
  const auto data = dir / version;
  std::filesystem::create_directories(data);
  testing::write_file(data, "keystore.pem", keystore);
  const auto link = dir / "..data_tmp";
  std::filesystem::remove(link);
  std::filesystem::create_directory_symlink(version, link);
  std::filesystem::rename(link, dir / "..data");
}

TEST_F(TlsTest, SourceRenewsOnChangedFilesAndKeepsTheOldOneOnBrokenFiles) {
  publish(dir_.path(), "v1", testing::keystore_pem(server_));
  std::filesystem::create_symlink("..data/keystore.pem", dir_.path() / "keystore.pem");
  config::tls_settings settings;
  settings.keystore_location = (dir_.path() / "keystore.pem").string();
  auto created = tls_context_source::create(settings, std::string(prefix));
  ASSERT_TRUE(created) << created.error();
  auto& source = *created.value();
  const auto first = source.current();
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), server_));

  EXPECT_FALSE(source.check_files()) << "nothing changed";
  EXPECT_EQ(source.reloads(), 0U);

  const test_certificate renewed = ca_.server_certificate();
  publish(dir_.path(), "v2", testing::keystore_pem(renewed));
  EXPECT_TRUE(source.check_files());
  EXPECT_EQ(source.reloads(), 1U);
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), renewed));
  // A connection made before keeps its context, which still works.
  EXPECT_TRUE(presents(handshake(*first, *client_context()), server_));

  // Half a file, a key that does not match, an expired certificate: refused once each, the renewed one stays.
  const std::string whole = testing::keystore_pem(ca_.server_certificate());
  publish(dir_.path(), "v3", whole.substr(0, whole.size() / 2));
  EXPECT_FALSE(source.check_files());
  EXPECT_EQ(source.refused_reloads(), 1U);
  EXPECT_FALSE(source.check_files());
  EXPECT_EQ(source.refused_reloads(), 1U) << "the same broken file is refused once";
  publish(dir_.path(), "v4", ca_.server_certificate().key_pem() + renewed.certificate_pem());
  EXPECT_FALSE(source.check_files());
  publish(dir_.path(), "v5", testing::keystore_pem(ca_.expired_certificate()));
  EXPECT_FALSE(source.check_files());
  EXPECT_EQ(source.refused_reloads(), 3U);
  EXPECT_EQ(source.reloads(), 1U);
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), renewed));

  std::filesystem::remove(dir_.path() / "keystore.pem");
  EXPECT_FALSE(source.check_files());
  EXPECT_EQ(source.refused_reloads(), 4U);
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), renewed));
}

TEST_F(TlsTest, SourceReplacesItsSettings) {
  auto created = tls_context_source::create(server_settings(server_), std::string(prefix));
  ASSERT_TRUE(created) << created.error();
  auto& source = *created.value();

  config::tls_settings broken;
  broken.keystore_key = ca_.server_certificate().key_pem();
  broken.keystore_certificate_chain = server_.certificate_pem();
  auto refused = source.replace(broken);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("listener.name.external.ssl.keystore.key: the private key does not match"),
            std::string::npos);
  EXPECT_EQ(source.refused_reloads(), 1U);
  EXPECT_EQ(source.settings(), server_settings(server_));

  const test_certificate renewed = ca_.server_certificate();
  config::tls_settings inline_settings;
  inline_settings.keystore_key = renewed.key_pem();
  inline_settings.keystore_certificate_chain = renewed.certificate_pem();
  ASSERT_TRUE(source.replace(inline_settings));
  EXPECT_EQ(source.reloads(), 1U);
  EXPECT_EQ(source.settings(), inline_settings);
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), renewed));
}

// AlterConfigs pointed the listener at a file that cannot be used yet (not there): refused once, tried again
// with the periodic checks, and taken when it appears; back to the first settings when the setting goes.
TEST_F(TlsTest, SourceTakesReplacedFilesOnceTheyCanBeUsed) {
  auto created = tls_context_source::create(server_settings(server_), std::string(prefix));
  ASSERT_TRUE(created) << created.error();
  auto& source = *created.value();
  auto later = server_settings(server_);
  later.keystore_location = (dir_.path() / "later.pem").string();
  ASSERT_FALSE(source.replace(later));
  EXPECT_FALSE(source.check_files());
  EXPECT_FALSE(source.check_files());
  EXPECT_EQ(source.refused_reloads(), 1U);
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), server_));

  const test_certificate renewed = ca_.server_certificate();
  testing::write_file(dir_.path(), "later.pem", testing::keystore_pem(renewed));
  EXPECT_TRUE(source.check_files());
  EXPECT_EQ(source.settings(), later);
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), renewed));

  ASSERT_TRUE(source.replace(server_settings(server_)));
  EXPECT_TRUE(presents(handshake(*source.current(), *client_context()), server_));
  EXPECT_FALSE(source.check_files()) << "nothing left to take";
}

TEST_F(TlsTest, SourceRefusesUnusableFirstSettings) {
  auto created = tls_context_source::create(server_settings(ca_.expired_certificate()), std::string(prefix));
  ASSERT_FALSE(created);
  EXPECT_NE(created.error().find("listener.name.external.ssl.keystore.location: the certificate"), std::string::npos);
}

}  // namespace
}  // namespace ferry::security
