#include "certs/certificate_authority.h"

#include <gtest/gtest.h>

namespace ferry::certs {
namespace {

using namespace std::chrono_literals;

TEST(CertificateAuthority, IssuesClientCertificatesItRecognisesUntilTheyNeedRenewal) {
  auto ca = certificate_authority::create("/O=Ferry/CN=clients CA", 24h * 365);
  ASSERT_TRUE(ca) << ca.error();
  auto issued = ca.value().issue("/CN=orders-app", 24h * 30);
  ASSERT_TRUE(issued) << issued.error();
  EXPECT_NE(issued.value().key.find("BEGIN PRIVATE KEY"), std::string::npos);
  const auto now = std::chrono::system_clock::now();
  EXPECT_TRUE(ca.value().current(issued.value().certificate, "orders-app", 24h * 7, now));
  // Within the renewal window, for another name, or from another CA: issued again.
  EXPECT_FALSE(ca.value().current(issued.value().certificate, "orders-app", 24h * 31, now));
  EXPECT_FALSE(ca.value().current(issued.value().certificate, "payments-app", 24h, now));
  auto other = certificate_authority::create("/CN=other CA", 24h);
  EXPECT_FALSE(other.value().current(issued.value().certificate, "orders-app", 1h, now));
  EXPECT_FALSE(ca.value().current("not a certificate", "orders-app", 1h, now));
}

TEST(CertificateAuthority, ABroughtCaIsCheckedAndKeepsIssuing) {
  auto made = certificate_authority::create("/CN=brought CA", 24h);
  ASSERT_TRUE(made);
  auto again = certificate_authority::from_pem(made.value().certificate_pem(), made.value().key_pem());
  ASSERT_TRUE(again) << again.error();
  auto issued = again.value().issue("/CN=a", 1h * 2);
  ASSERT_TRUE(issued);
  EXPECT_TRUE(made.value().current(issued.value().certificate, "a", 1h, std::chrono::system_clock::now()));

  auto other = certificate_authority::create("/CN=other", 24h);
  EXPECT_NE(certificate_authority::from_pem(made.value().certificate_pem(), other.value().key_pem())
                .error()
                .find("is not the key of ca.crt"),
            std::string::npos);
  EXPECT_NE(certificate_authority::from_pem(issued.value().certificate, issued.value().key)
                .error()
                .find("not a CA certificate"),
            std::string::npos);
  EXPECT_NE(certificate_authority::from_pem("", made.value().key_pem()).error().find("ca.crt"), std::string::npos);
}

}  // namespace
}  // namespace ferry::certs
