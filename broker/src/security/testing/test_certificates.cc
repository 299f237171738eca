#include "security/testing/test_certificates.h"

#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <random>
#include <stdexcept>

namespace ferry::security::testing {
namespace {

using x509_name_ptr = std::unique_ptr<X509_NAME, openssl_deleter<X509_NAME_free>>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificates: ") + what + " failed");
}

pkey_ptr new_key() {
  pkey_ptr key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return {data, static_cast<std::size_t>(size)};
}

// "/C=US/O=Acme/CN=alice+UID=7": most significant first, "+" inside a multi-valued RDN.
x509_name_ptr parse_subject(std::string_view subject) {
  x509_name_ptr name(X509_NAME_new());
  check(name != nullptr && subject.starts_with('/'), "subject");
  std::size_t at = 1;
  bool joins_previous = false;
  while (at < subject.size()) {
    const std::size_t next = subject.find_first_of("/+", at);
    const std::string_view attribute = subject.substr(at, next == std::string_view::npos ? next : next - at);
    const std::size_t equals = attribute.find('=');
    check(equals != std::string_view::npos, "subject attribute");
    const std::string field(attribute.substr(0, equals));
    const std::string value(attribute.substr(equals + 1));
    check(X509_NAME_add_entry_by_txt(name.get(), field.c_str(), MBSTRING_UTF8,
                                     reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                     joins_previous ? -1 : 0) == 1,
          "X509_NAME_add_entry_by_txt");
    if (next == std::string_view::npos) break;
    joins_previous = subject[next] == '+';
    at = next + 1;
  }
  return name;
}

void add_extension(X509* certificate, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  check(extension != nullptr, "X509V3_EXT_conf_nid");
  const int added = X509_add_ext(certificate, extension, -1);
  X509_EXTENSION_free(extension);
  check(added == 1, "X509_add_ext");
}

// Signs a certificate for `key` with `issuer_key`; a self-signed one when `issuer` is null.
x509_ptr make_certificate(const certificate_options& options, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
                          bool is_ca) {
  x509_ptr certificate(X509_new());
  check(certificate != nullptr && X509_set_version(certificate.get(), X509_VERSION_3) == 1, "X509_new");
  std::uint64_t serial = 0;
  check(RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial) == 1, "RAND_bytes");
  check(ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate.get()), serial >> 1) == 1, "serial");
  check(X509_gmtime_adj(X509_getm_notBefore(certificate.get()), options.not_before.count()) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(certificate.get()), options.not_after.count()) != nullptr,
        "validity");
  const x509_name_ptr subject = parse_subject(options.subject);
  check(X509_set_subject_name(certificate.get(), subject.get()) == 1, "subject");
  X509* signer = issuer != nullptr ? issuer : certificate.get();
  check(X509_set_issuer_name(certificate.get(), X509_get_subject_name(signer)) == 1, "issuer");
  check(X509_set_pubkey(certificate.get(), key) == 1, "public key");
  add_extension(certificate.get(), signer, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  add_extension(certificate.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer != nullptr) add_extension(certificate.get(), signer, NID_authority_key_identifier, "keyid");
  if (is_ca) add_extension(certificate.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  std::string names;
  for (const auto& dns : options.dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : options.ip_addresses) names += (names.empty() ? "IP:" : ",IP:") + ip;
  if (!names.empty()) add_extension(certificate.get(), signer, NID_subject_alt_name, names);
  check(X509_sign(certificate.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return certificate;
}

test_certificate make_ca(std::string_view subject) {
  pkey_ptr key = new_key();
  certificate_options options;
  options.subject = std::string(subject);
  options.not_after = std::chrono::hours(24 * 365);
  x509_ptr certificate = make_certificate(options, key.get(), nullptr, nullptr, true);
  return {std::move(key), std::move(certificate)};
}

}  // namespace

std::string test_certificate::certificate_pem() const {
  bio_ptr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr && PEM_write_bio_X509(bio.get(), certificate_.get()) == 1, "PEM_write_bio_X509");
  return bio_text(bio.get());
}

std::string test_certificate::key_pem(std::string_view password) const {
  bio_ptr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr, "BIO_new");
  const std::string pass(password);
  const int written = password.empty()
                          ? PEM_write_bio_PKCS8PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr)
                          : PEM_write_bio_PKCS8PrivateKey(bio.get(), key_.get(), EVP_aes_256_cbc(), pass.data(),
                                                          static_cast<int>(pass.size()), nullptr, nullptr);
  check(written == 1, "PEM_write_bio_PKCS8PrivateKey");
  return bio_text(bio.get());
}

test_ca::test_ca(std::string_view subject) : ca_(make_ca(subject)) {}

test_certificate test_ca::issue(const certificate_options& options) const {
  pkey_ptr key = new_key();
  x509_ptr certificate = make_certificate(options, key.get(), ca_.certificate(), ca_.key(), false);
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
