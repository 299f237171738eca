#include "certs/ca_rotation.h"

namespace ferry::certs {
namespace {

using boost::outcome_v2::failure;

// Keeps, of the certificates in `pem`, those that have not ended at `now`.
security::tls_result<void> keep_unended(std::string& pem, const std::string& setting,
                                        std::chrono::system_clock::time_point now) {
  if (pem.empty()) return boost::outcome_v2::success();
  FERRY_TRY(auto certificates, security::parse_certificates(pem, setting));
  pem.clear();
  for (const auto& certificate : certificates) {
    const auto end = security::certificate_not_after(*certificate);
    if (end && *end > now) pem += security::certificate_pem(certificate.get());
  }
  return boost::outcome_v2::success();
}

std::string with_newline(std::string pem) {
  if (!pem.empty() && pem.back() != '\n') pem += '\n';
  return pem;
}

}  // namespace

security::tls_result<ca_step> advance(const ca_material& material, const std::string& subject, const ca_timing& timing,
                                      bool renews, std::chrono::system_clock::time_point now) {
  FERRY_TRY(auto ca, certificate_authority::from_pem(material.certificate, material.key));
  ca_step step{material, {}};
  auto& next = step.material;
  FERRY_TRY(keep_unended(next.previous, "previous.crt", now));
  if (next.previous.size() != material.previous.size()) {
    step.changes.emplace_back("dropped the CAs that have ended from the trust bundle");
  }
  if (!renews) return step;
  if (next.next_certificate.empty()) {
    if (ca.not_after() - timing.renew_before > now) return step;
    FERRY_TRY(auto successor, certificate_authority::create(subject, timing.validity));
    next.next_certificate = successor.certificate_pem();
    next.next_key = successor.key_pem();
    next.next_since = now;
    step.changes.push_back("made the CA's successor: trusted from now, signing in " +
                           std::to_string(timing.trust_propagation.count()) + " s");
    return step;
  }
  if (auto successor = certificate_authority::from_pem(next.next_certificate, next.next_key); !successor)
    return failure("next.crt, next.key: " + successor.error());
  // A CA that has ended cannot wait for its successor's trust to spread: nothing it signed works any more.
  if (next.next_since && *next.next_since + timing.trust_propagation > now && ca.not_after() > now) return step;
  next.previous = with_newline(next.certificate) + next.previous;
  next.certificate = std::move(next.next_certificate);
  next.key = std::move(next.next_key);
  next.next_certificate.clear();
  next.next_key.clear();
  next.next_since.reset();
  step.changes.emplace_back("the CA's successor signs now; the CA it replaces stays trusted until it ends");
  return step;
}

std::string trust_bundle(const ca_material& material, std::chrono::system_clock::time_point now) {
  auto previous = material.previous;
  if (!keep_unended(previous, "previous.crt", now)) previous.clear();
  return with_newline(material.certificate) + with_newline(material.next_certificate) + previous;
}

}  // namespace ferry::certs
