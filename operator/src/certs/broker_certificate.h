#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "certs/ca_keeper.h"
#include "kube/api_client.h"

namespace ferry::certs {

// The brokers' certificate: one for every broker, naming every address a client or another broker reaches one at.
struct broker_certificate_options {
  std::string ns;
  std::string name;         // the Secret
  std::string common_name;  // the subject's CN: the brokers' principal when they log in to each other with it
  std::vector<std::string> addresses;  // subjectAltName: DNS names (wildcards included) and IP addresses
  std::chrono::seconds validity{std::chrono::hours(24 * 365)};
  std::chrono::seconds renew_before{std::chrono::hours(24 * 30)};
};

// Keeps the brokers' Secret: `keystore.pem` (the key, then the certificate: what ssl.keystore.location reads),
// `tls.crt`, `tls.key`, `ca.crt` (the cluster CA's trust bundle) and `truststore.pem` (that bundle and the clients
// CA's: what ssl.truststore.location reads, for client certificates and the brokers' own). The certificate is
// issued again when the cluster CA no longer signs it, its addresses changed, or its end is within renew_before.
// The brokers take the Secret's new files without a restart. Why not, when it cannot be issued or written.
std::optional<std::string> keep_broker_certificate(kube::api_client& api, const broker_certificate_options& options,
                                                   const ca_keeper::state& cluster_ca,
                                                   const ca_keeper::state* clients_ca,
                                                   std::chrono::system_clock::time_point now);

}  // namespace ferry::certs
