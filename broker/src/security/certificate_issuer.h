#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "security/tls_context.h"

namespace ferry::security {

// What a new certificate says.
struct certificate_request {
  // In OpenSSL's -subj form, most significant RDN first: "/O=Ferry/CN=alice"; "+" joins the attributes of one
  // multi-valued RDN ("/O=Acme/CN=alice+UID=7").
  std::string subject = "/CN=localhost";
  std::vector<std::string> dns_names;     // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries
  // Validity relative to now; a negative not_after makes an expired certificate.
  std::chrono::seconds not_before{-std::chrono::hours(1)};
  std::chrono::seconds not_after{std::chrono::hours(24 * 365)};
  bool is_ca = false;  // basicConstraints CA:TRUE and keyCertSign
};

// A new EC P-256 key.
tls_result<pkey_ptr> new_key();

// A certificate for `key` (X.509 v3, SHA-256, a random serial), signed by `issuer` with `issuer_key`, or
// self-signed when `issuer` is null.
tls_result<x509_ptr> issue_certificate(const certificate_request& request, EVP_PKEY* key, X509* issuer,
                                       EVP_PKEY* issuer_key);

// PEM texts: a certificate; a PKCS#8 private key ("PRIVATE KEY", or "ENCRYPTED PRIVATE KEY" with AES-256-CBC when
// a password is given).
std::string certificate_pem(X509* certificate);
std::string private_key_pem(EVP_PKEY* key, std::string_view password = {});

// A private key from unencrypted PEM; the message names `what` when it cannot be read.
tls_result<pkey_ptr> parse_private_key(const std::string& pem, const std::string& what);

// Whether `certificate` was signed by `issuer`'s key.
bool issued_by(X509* certificate, X509* issuer);

}  // namespace ferry::security
