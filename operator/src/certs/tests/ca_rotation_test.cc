#include "certs/ca_rotation.h"

#include <gtest/gtest.h>

namespace ferry::certs {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::system_clock;

constexpr ca_timing timing{.validity = 100s, .renew_before = 40s, .trust_propagation = 10s};

ca_material made_now() {
  auto ca = certificate_authority::create("/CN=cluster CA", timing.validity);
  EXPECT_TRUE(ca) << ca.error();
  return {ca.value().certificate_pem(), ca.value().key_pem(), {}, {}, std::nullopt, {}};
}

std::size_t certificates_in(const std::string& pem) {
  std::size_t count = 0;
  for (auto at = pem.find("BEGIN CERTIFICATE"); at != std::string::npos; at = pem.find("BEGIN CERTIFICATE", at + 1))
    ++count;
  return count;
}

ca_step step(const ca_material& material, clock::time_point now, bool renews = true) {
  auto moved = advance(material, "/CN=cluster CA", timing, renews, now);
  EXPECT_TRUE(moved) << moved.error();
  return moved ? std::move(moved).value() : ca_step{material, {}};
}

TEST(CaRotation, ACaNearItsEndGetsASuccessorThatIsTrustedFirstThenSignsThenTheOldOneGoes) {
  const auto start = clock::now();
  const auto original = made_now();

  // Far from its end: nothing happens, and only the CA is trusted.
  auto early = step(original, start + 10s);
  EXPECT_TRUE(early.changes.empty());
  EXPECT_EQ(certificates_in(trust_bundle(early.material, start + 10s)), 1U);

  // Within renew_before: a successor, trusted beside the CA, which still signs.
  auto phase1 = step(original, start + 65s);
  ASSERT_EQ(phase1.changes.size(), 1U);
  EXPECT_EQ(phase1.material.certificate, original.certificate);
  EXPECT_FALSE(phase1.material.next_certificate.empty());
  EXPECT_EQ(phase1.material.next_since, start + 65s);
  EXPECT_EQ(certificates_in(trust_bundle(phase1.material, start + 65s)), 2U);
  // Still spreading its trust: nothing more.
  EXPECT_TRUE(step(phase1.material, start + 70s).changes.empty());

  // After trust_propagation the successor signs; the old CA stays trusted until it ends.
  auto phase2 = step(phase1.material, start + 76s);
  ASSERT_EQ(phase2.changes.size(), 1U);
  EXPECT_EQ(phase2.material.certificate, phase1.material.next_certificate);
  EXPECT_EQ(phase2.material.key, phase1.material.next_key);
  EXPECT_TRUE(phase2.material.next_certificate.empty());
  EXPECT_FALSE(phase2.material.next_since);
  EXPECT_NE(phase2.material.previous.find(original.certificate.substr(0, 80)), std::string::npos);
  EXPECT_EQ(certificates_in(trust_bundle(phase2.material, start + 76s)), 2U);
  auto signing = certificate_authority::from_pem(phase2.material.certificate, phase2.material.key);
  ASSERT_TRUE(signing);
  auto old = certificate_authority::from_pem(original.certificate, original.key);
  auto leaf = old.value().issue("/CN=broker", 30s);
  // A certificate the old CA signed is no longer current: it is issued again by the successor.
  EXPECT_FALSE(signing.value().current(leaf.value().certificate, "broker", 1s, start + 76s));

  // The old CA ends: it leaves the bundle.
  auto phase3 = step(phase2.material, start + 101s);
  ASSERT_FALSE(phase3.changes.empty());
  EXPECT_EQ(phase3.changes.front(), "dropped the CAs that have ended from the trust bundle");
  EXPECT_TRUE(phase3.material.previous.empty());
  EXPECT_EQ(trust_bundle(phase3.material, start + 101s).find(original.certificate.substr(0, 80)), std::string::npos);
}

TEST(CaRotation, ABroughtCaIsNeverReplaced) {
  const auto start = clock::now();
  const auto brought = made_now();
  auto late = step(brought, start + 90s, /*renews=*/false);
  EXPECT_TRUE(late.changes.empty());
  EXPECT_EQ(late.material.certificate, brought.certificate);
  EXPECT_TRUE(late.material.next_certificate.empty());
}

TEST(CaRotation, ACaThatHasEndedIsReplacedAtOnce) {
  const auto start = clock::now();
  auto phase1 = step(made_now(), start + 65s);
  ASSERT_FALSE(phase1.material.next_certificate.empty());
  // The operator was away past the CA's end: the successor signs without waiting for trust_propagation.
  phase1.material.next_since = start + 99s;
  auto replaced = step(phase1.material, start + 101s);
  EXPECT_EQ(replaced.material.certificate, phase1.material.next_certificate);
}

TEST(CaRotation, DamagedMaterialIsRefused) {
  const auto start = clock::now();
  auto material = made_now();
  material.key = "not a key";
  EXPECT_NE(advance(material, "/CN=x", timing, true, start).error().find("ca.key"), std::string::npos);

  auto phase1 = step(made_now(), start + 65s);
  phase1.material.next_key = made_now().key;  // another CA's key
  EXPECT_NE(advance(phase1.material, "/CN=x", timing, true, start + 80s).error().find("next.crt, next.key"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::certs
