#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "security/certificate_issuer.h"
#include "security/tls_context.h"

namespace ferry::security::testing {

// A key and its certificate, made in memory for tests (no openssl CLI, no files unless asked).
class test_certificate {
 public:
  test_certificate(pkey_ptr key, x509_ptr certificate) : key_(std::move(key)), certificate_(std::move(certificate)) {}

  [[nodiscard]] EVP_PKEY* key() const { return key_.get(); }
  [[nodiscard]] X509* certificate() const { return certificate_.get(); }
  [[nodiscard]] std::string certificate_pem() const;
  // PKCS#8 ("PRIVATE KEY"), or "ENCRYPTED PRIVATE KEY" (AES-256-CBC) when a password is given.
  [[nodiscard]] std::string key_pem(std::string_view password = {}) const;

 private:
  pkey_ptr key_;
  x509_ptr certificate_;
};

// What a test certificate says (security/certificate_issuer.h).
using certificate_options = certificate_request;

// A certificate authority (an EC P-256 key and a self-signed CA certificate) that issues test certificates.
// Throws std::runtime_error when OpenSSL fails.
class test_ca {
 public:
  explicit test_ca(std::string_view subject = "/O=Ferry tests/CN=Ferry test CA");

  [[nodiscard]] const test_certificate& ca() const { return ca_; }
  [[nodiscard]] test_certificate issue(const certificate_options& options) const;
  // CN=localhost with SAN DNS:localhost and IP:127.0.0.1, for servers that clients reach at either.
  [[nodiscard]] test_certificate server_certificate() const;
  [[nodiscard]] test_certificate client_certificate(std::string_view subject) const;
  // A server certificate whose validity ended an hour ago.
  [[nodiscard]] test_certificate expired_certificate() const;

 private:
  test_certificate ca_;
};

// The PEM of a keystore file: the PKCS#8 key, then the certificate chain (the leaf, then `chain`).
std::string keystore_pem(const test_certificate& leaf, std::string_view password = {},
                         const std::vector<const test_certificate*>& chain = {});

// Writes `text` to dir/name (replacing it) and returns the path.
std::filesystem::path write_file(const std::filesystem::path& dir, std::string_view name, std::string_view text);

// A fresh directory under the system's temporary directory, removed with its contents when destroyed.
class temporary_directory {
 public:
  temporary_directory();
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  ~temporary_directory();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ferry::security::testing
