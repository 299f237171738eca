#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "certs/certificate_authority.h"

namespace ferry::certs {

// How long a CA the operator makes lives, and how it is replaced (docs/operator.md, "Certificates").
struct ca_timing {
  std::chrono::seconds validity{std::chrono::hours(24 * 365 * 5)};
  // A CA this close to its end gets a successor.
  std::chrono::seconds renew_before{std::chrono::hours(24 * 30)};
  // How long the successor is only trusted (in every bundle the operator writes) before it signs: the time clients
  // and brokers get to pick up the bundle that trusts both.
  std::chrono::seconds trust_propagation{std::chrono::hours(24 * 7)};
};

// What a CA's Secret holds. ca.crt and ca.key sign; next.crt and next.key are the successor while it is only
// trusted (since next_since, the annotation ferry.dev/next-ca-since in Unix seconds); previous.crt holds the CAs
// it replaced, trusted until they end, so certificates they signed keep working until they are issued again.
struct ca_material {
  std::string certificate;
  std::string key;
  std::string next_certificate;
  std::string next_key;
  std::optional<std::chrono::system_clock::time_point> next_since;
  std::string previous;
};

// One step of a CA's renewal, in three phases (as Strimzi's): near its end the CA gets a successor that every trust
// bundle carries; after trust_propagation the successor signs (every certificate is then issued again) and the old
// CA stays trusted until it ends; then it is dropped.
struct ca_step {
  ca_material material;
  std::vector<std::string> changes;  // what happened, for the log and events; empty: nothing
};

// The material moved on to `now`. `renews`: whether the operator made this CA (a CA brought by the user is never
// replaced, only checked). Refused when the material holds no usable CA.
security::tls_result<ca_step> advance(const ca_material& material, const std::string& subject, const ca_timing& timing,
                                      bool renews, std::chrono::system_clock::time_point now);

// The certificates to trust, PEM: the signing CA, its successor, and the previous CAs that have not ended.
std::string trust_bundle(const ca_material& material, std::chrono::system_clock::time_point now);

}  // namespace ferry::certs
