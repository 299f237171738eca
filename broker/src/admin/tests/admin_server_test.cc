// The admin API over TLS with real handshakes: open and protected paths, HTTP Basic, client certificates, and
// the delay of a failed login.

#include "admin/admin_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "admin/tests/admin_test_support.h"
#include "metrics/broker_metrics.h"
#include "security/scram_credential.h"
#include "security/testing/test_certificates.h"

namespace ferry::admin {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using security::testing::test_ca;
using security::testing::test_certificate;

struct reply {
  int status = 0;
  std::string www_authenticate;
  std::string body;
};

class admin_https_test : public ::testing::Test {
 protected:
  admin_https_test() {
    users_.add("ferry-broker", security::scram_mechanism::sha512, "broker-secret");
    security::testing::write_file(dir_.path(), "broker.pem", security::testing::keystore_pem(ca_.server_certificate()));
    security::testing::write_file(dir_.path(), "ca.pem", ca_.ca().certificate_pem());
  }
  ~admin_https_test() override {
    if (server_) asio::post(io_, [this] { server_->stop(); });
    work_.reset();
    if (thread_.joinable()) thread_.join();
  }

  void start(config::admin_api_security settings) {
    settings.https = true;
    settings.tls.keystore_location = (dir_.path() / "broker.pem").string();
    settings.tls.truststore_location = (dir_.path() / "ca.pem").string();
    auto access =
        admin_access::create(settings, users_, checker_, *metrics_.registry(), std::chrono::milliseconds(300));
    ASSERT_TRUE(access) << access.error();
    server_ = std::make_unique<admin_server>(
        io_,
        admin_sources{
            .broker_id = 1, .view = [] { return std::make_shared<const coord::cluster_view>(); }, .metrics = &metrics_},
        std::move(access).value());
    ASSERT_TRUE(server_->listen("127.0.0.1", 0));
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }

  // One GET on a new TLS connection, verifying the server against the test CA.
  reply get(const std::string& target, const std::string& authorization = {},
            const test_certificate* client_certificate = nullptr) {
    asio::io_context io;
    asio::ssl::context context(asio::ssl::context::tls_client);
    const auto ca_pem = ca_.ca().certificate_pem();
    context.add_certificate_authority(asio::buffer(ca_pem));
    context.set_verify_mode(asio::ssl::verify_peer);
    if (client_certificate != nullptr) {
      const auto key = client_certificate->key_pem();
      const auto chain = client_certificate->certificate_pem();
      context.use_private_key(asio::buffer(key), asio::ssl::context::pem);
      context.use_certificate_chain(asio::buffer(chain));
    }
    beast::ssl_stream<beast::tcp_stream> stream(io, context);
    beast::get_lowest_layer(stream).connect({asio::ip::make_address("127.0.0.1"), server_->bound_port()});
    stream.handshake(asio::ssl::stream_base::client);
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "localhost");
    if (!authorization.empty()) request.set(http::field::authorization, authorization);
    request.keep_alive(false);
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return {static_cast<int>(response.result_int()), std::string(response[http::field::www_authenticate]),
            response.body()};
  }

  static std::string basic(const std::string& user, const std::string& password) {
    return "Basic " + security::base64_encode(user + ":" + password);
  }

  test_ca ca_;
  security::testing::temporary_directory dir_;
  testing::fake_users users_;
  testing::inline_checker checker_;
  metrics::broker_metrics metrics_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::unique_ptr<admin_server> server_;
  std::thread thread_;
};

TEST_F(admin_https_test, basic_protects_all_but_the_exempt_paths) {
  start({.basic = true});
  EXPECT_EQ(get("/v1/health").status, 200);
  EXPECT_EQ(get("/metrics").status, 200);

  const auto anonymous = get("/v1/brokers");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.www_authenticate, R"(Basic realm="ferry", charset="UTF-8")");
  EXPECT_EQ(anonymous.body, "{\"error\":\"authentication required\"}\n");
  EXPECT_EQ(get("/v1/health?x", "").status, 200);

  EXPECT_EQ(get("/v1/brokers", basic("ferry-broker", "broker-secret")).status, 200);

  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(get("/v1/brokers", basic("ferry-broker", "guess")).status, 401);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300));

  const auto metrics = get("/metrics").body;
  EXPECT_NE(metrics.find(R"(ferry_admin_authentications_total{method="basic",result="success"} 1)"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(ferry_admin_authentications_total{method="basic",result="failure"} 1)"), std::string::npos);
}

TEST_F(admin_https_test, mtls_takes_a_verified_client_certificate) {
  config::admin_api_security settings{.mtls = true};
  settings.tls.client_authentication = config::client_auth::requested;
  settings.tls.principal_mapping_rules = "RULE:^CN=([^,]*)$/$1/";
  start(settings);
  const auto operator_certificate = ca_.client_certificate("/CN=ferry-operator");
  EXPECT_EQ(get("/v1/brokers", {}, &operator_certificate).status, 200);
  const auto anonymous = get("/v1/brokers");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.www_authenticate, "");  // no Basic to invite
  const auto unmapped = ca_.client_certificate("/O=Acme/CN=someone");
  EXPECT_EQ(get("/v1/brokers", {}, &unmapped).status, 401);
  // A certificate from another CA fails the handshake itself.
  const test_ca stranger_ca("/CN=Someone else's CA");
  const auto stranger = stranger_ca.client_certificate("/CN=ferry-operator");
  EXPECT_ANY_THROW(get("/v1/brokers", {}, &stranger));
}

TEST_F(admin_https_test, refuses_a_missing_key_by_name) {
  config::admin_api_security settings{.https = true};
  settings.tls.keystore_location = (dir_.path() / "missing.pem").string();
  const auto access = admin_access::create(settings, users_, checker_, *metrics_.registry(), {});
  ASSERT_FALSE(access);
  EXPECT_NE(access.error().find("admin.ssl.keystore.location"), std::string::npos) << access.error();
}

}  // namespace
}  // namespace ferry::admin
