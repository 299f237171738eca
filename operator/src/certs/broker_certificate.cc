#include "certs/broker_certificate.h"

#include "base/log.h"
#include "certs/kept_secret.h"

namespace ferry::certs {
namespace {

constexpr const char* addresses_annotation = "ferry.dev/certificate-addresses";

std::string joined(const std::vector<std::string>& addresses) {
  std::string text;
  for (const auto& address : addresses) text += (text.empty() ? "" : ",") + address;
  return text;
}

}  // namespace

std::optional<std::string> keep_broker_certificate(kube::api_client& api, const broker_certificate_options& options,
                                                   const ca_keeper::state& cluster_ca,
                                                   const ca_keeper::state* clients_ca,
                                                   std::chrono::system_clock::time_point now) {
  auto read = read_secret(api, options.ns, options.name);
  if (const auto* why = std::get_if<std::string>(&read)) return *why;
  const auto& secret = std::get<kept_secret>(read);
  const auto addresses = joined(options.addresses);
  auto certificate = secret.value("tls.crt").value_or("");
  auto key = secret.value("tls.key").value_or("");
  const bool current = !key.empty() && secret.annotation(addresses_annotation) == addresses &&
                       cluster_ca.signing.current(certificate, options.common_name, options.renew_before, now);
  if (!current) {
    auto issued = cluster_ca.signing.issue("/CN=" + options.common_name, options.validity, options.addresses);
    if (!issued) return "cannot issue the brokers' certificate: " + issued.error();
    certificate = std::move(issued.value().certificate);
    key = std::move(issued.value().key);
  }
  const auto truststore = cluster_ca.trust_bundle + (clients_ca != nullptr ? clients_ca->trust_bundle : "");
  auto written = write_secret(api, secret,
                              {{"tls.crt", certificate},
                               {"tls.key", key},
                               {"keystore.pem", key + certificate},
                               {"ca.crt", cluster_ca.trust_bundle},
                               {"truststore.pem", truststore}},
                              {{addresses_annotation, addresses}});
  if (const auto* why = std::get_if<std::string>(&written)) return *why;
  if (!current)
    FERRY_LOG(info, "certs") << secret.where() << ": issued the brokers' certificate (CN=" << options.common_name
                             << ", " << addresses << ")";
  return std::nullopt;
}

}  // namespace ferry::certs
