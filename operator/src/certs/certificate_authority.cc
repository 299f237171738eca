#include "certs/certificate_authority.h"

#include <arpa/inet.h>
#include <openssl/x509v3.h>

namespace ferry::certs {
namespace {

using boost::outcome_v2::failure;

// The certificate's subject common name.
std::string common_name_of(X509* certificate) {
  X509_NAME* name = X509_get_subject_name(certificate);
  const int at = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (at < 0) return {};
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at));
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
          static_cast<std::size_t>(ASN1_STRING_length(value))};
}

bool is_ip_address(const std::string& address) {
  in6_addr parsed{};
  return inet_pton(AF_INET, address.c_str(), &parsed) == 1 || inet_pton(AF_INET6, address.c_str(), &parsed) == 1;
}

}  // namespace

certificate_authority::certificate_authority(security::pkey_ptr key, security::x509_ptr certificate)
    : key_(key.release(), EVP_PKEY_free),
      certificate_(certificate.release(), X509_free),
      certificate_pem_(security::certificate_pem(certificate_.get())),
      key_pem_(security::private_key_pem(key_.get())) {}

security::tls_result<certificate_authority> certificate_authority::create(const std::string& subject,
                                                                          std::chrono::seconds validity) {
  FERRY_TRY(auto key, security::new_key());
  security::certificate_request request;
  request.subject = subject;
  request.not_after = validity;
  request.is_ca = true;
  FERRY_TRY(auto certificate, security::issue_certificate(request, key.get(), nullptr, nullptr));
  return certificate_authority(std::move(key), std::move(certificate));
}

security::tls_result<certificate_authority> certificate_authority::from_pem(const std::string& certificate,
                                                                            const std::string& key) {
  FERRY_TRY(auto chain, security::parse_certificates(certificate, "ca.crt"));
  FERRY_TRY(auto private_key, security::parse_private_key(key, "ca.key"));
  auto& ca = chain.front();
  if (X509_check_private_key(ca.get(), private_key.get()) != 1) return failure("ca.key is not the key of ca.crt");
  if (X509_check_ca(ca.get()) == 0) return failure("ca.crt is not a CA certificate (basicConstraints CA:TRUE)");
  return certificate_authority(std::move(private_key), std::move(ca));
}

security::tls_result<certificate_authority::issued> certificate_authority::issue(
    const std::string& subject, std::chrono::seconds validity, const std::vector<std::string>& addresses) const {
  FERRY_TRY(auto key, security::new_key());
  security::certificate_request request;
  request.subject = subject;
  request.not_after = validity;
  for (const auto& address : addresses)
    (is_ip_address(address) ? request.ip_addresses : request.dns_names).push_back(address);
  FERRY_TRY(auto certificate, security::issue_certificate(request, key.get(), certificate_.get(), key_.get()));
  return issued{security::certificate_pem(certificate.get()), security::private_key_pem(key.get())};
}

std::chrono::system_clock::time_point certificate_authority::not_after() const {
  return security::certificate_not_after(*certificate_).value_or(std::chrono::system_clock::time_point{});
}

bool certificate_authority::current(const std::string& certificate, const std::string& common_name,
                                    std::chrono::seconds renew_before,
                                    std::chrono::system_clock::time_point now) const {
  auto parsed = security::parse_certificates(certificate, "tls.crt");
  if (!parsed) return false;
  X509* leaf = parsed.value().front().get();
  const auto not_after = security::certificate_not_after(*leaf);
  return security::issued_by(leaf, certificate_.get()) && common_name_of(leaf) == common_name && not_after &&
         *not_after - renew_before > now;
}

}  // namespace ferry::certs
