#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "security/certificate_issuer.h"

namespace ferry::certs {

// A CA that issues certificates: its key and self-signed certificate, as PEM in a Secret (ca.crt, ca.key), made by
// the operator or brought by the user. Thread-safe once made: issuing only reads it.
class certificate_authority {
 public:
  // A new CA (an EC P-256 key) named `subject`, valid for `validity` from now.
  static security::tls_result<certificate_authority> create(const std::string& subject, std::chrono::seconds validity);
  // A CA from its PEM certificate and unencrypted key; refused when the key is not the certificate's, or the
  // certificate is not a CA's.
  static security::tls_result<certificate_authority> from_pem(const std::string& certificate, const std::string& key);

  [[nodiscard]] const std::string& certificate_pem() const { return certificate_pem_; }
  [[nodiscard]] const std::string& key_pem() const { return key_pem_; }

  struct issued {
    std::string certificate;  // PEM
    std::string key;          // PEM, PKCS#8
  };
  // A certificate for `subject` ("/CN=alice"), valid for `validity` from now (backdated an hour for clocks that
  // lag), naming `addresses` (DNS names, wildcards included, and IP addresses) as its subjectAltName.
  [[nodiscard]] security::tls_result<issued> issue(const std::string& subject, std::chrono::seconds validity,
                                                   const std::vector<std::string>& addresses = {}) const;
  // The end of this CA's own validity.
  [[nodiscard]] std::chrono::system_clock::time_point not_after() const;

  // Whether `certificate` (PEM) is one this CA signed for `subject`'s common name and stays valid for more than
  // `renew_before` after `now`: otherwise it is issued again.
  [[nodiscard]] bool current(const std::string& certificate, const std::string& common_name,
                             std::chrono::seconds renew_before, std::chrono::system_clock::time_point now) const;

 private:
  certificate_authority(security::pkey_ptr key, security::x509_ptr certificate);

  std::shared_ptr<EVP_PKEY> key_;
  std::shared_ptr<X509> certificate_;
  std::string certificate_pem_;
  std::string key_pem_;
};

}  // namespace ferry::certs
