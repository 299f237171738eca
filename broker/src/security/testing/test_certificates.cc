#include "security/testing/test_certificates.h"

#include <fstream>
#include <random>
#include <stdexcept>

#include "security/certificate_issuer.h"

namespace ferry::security::testing {
namespace {

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificates: ") + what + " failed");
}

template <typename T>
T checked(tls_result<T> made) {
  if (!made) throw std::runtime_error("test certificates: " + made.error());
  return std::move(made).value();
}

test_certificate make_ca(std::string_view subject) {
  pkey_ptr key = checked(new_key());
  certificate_options options;
  options.subject = std::string(subject);
  options.is_ca = true;
  x509_ptr certificate = checked(issue_certificate(options, key.get(), nullptr, nullptr));
  return {std::move(key), std::move(certificate)};
}

}  // namespace

std::string test_certificate::certificate_pem() const { return security::certificate_pem(certificate_.get()); }

std::string test_certificate::key_pem(std::string_view password) const { return private_key_pem(key_.get(), password); }

test_ca::test_ca(std::string_view subject) : ca_(make_ca(subject)) {}

test_certificate test_ca::issue(const certificate_options& options) const {
  pkey_ptr key = checked(new_key());
  x509_ptr certificate = checked(issue_certificate(options, key.get(), ca_.certificate(), ca_.key()));
  return {std::move(key), std::move(certificate)};
}

test_certificate test_ca::server_certificate() const {
  certificate_options options;
  options.dns_names = {"localhost"};
  options.ip_addresses = {"127.0.0.1"};
  return issue(options);
}

test_certificate test_ca::client_certificate(std::string_view subject) const {
  certificate_options options;
  options.subject = std::string(subject);
  return issue(options);
}

test_certificate test_ca::expired_certificate() const {
  certificate_options options;
  options.dns_names = {"localhost"};
  options.ip_addresses = {"127.0.0.1"};
  options.not_before = -std::chrono::hours(48);
  options.not_after = -std::chrono::hours(1);
  return issue(options);
}

std::string keystore_pem(const test_certificate& leaf, std::string_view password,
                         const std::vector<const test_certificate*>& chain) {
  std::string pem = leaf.key_pem(password) + leaf.certificate_pem();
  for (const auto* certificate : chain) pem += certificate->certificate_pem();
  return pem;
}

std::filesystem::path write_file(const std::filesystem::path& dir, std::string_view name, std::string_view text) {
  std::filesystem::path path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  check(static_cast<bool>(out.flush()), "writing a file");
  return path;
}

temporary_directory::temporary_directory() {
  std::random_device random;
  path_ = std::filesystem::temp_directory_path() / ("ferry-tls-" + std::to_string(random()) + std::to_string(random()));
  std::filesystem::create_directories(path_);
}

temporary_directory::~temporary_directory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace ferry::security::testing
