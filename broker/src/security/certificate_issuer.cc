#include "security/certificate_issuer.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

namespace ferry::security {
namespace {

using boost::outcome_v2::failure;
using x509_name_ptr = std::unique_ptr<X509_NAME, openssl_deleter<X509_NAME_free>>;
using extension_ptr = std::unique_ptr<X509_EXTENSION, openssl_deleter<X509_EXTENSION_free>>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

tls_result<void> need(bool ok, const char* what) {
  if (ok) return boost::outcome_v2::success();
  ERR_clear_error();
  return failure(std::string("cannot make a certificate: ") + what + " failed");
}

// "/C=US/O=Acme/CN=alice+UID=7": most significant first, "+" inside a multi-valued RDN.
tls_result<x509_name_ptr> parse_subject(std::string_view subject) {
  x509_name_ptr name(X509_NAME_new());
  if (name == nullptr || !subject.starts_with('/'))
    return failure("the subject " + std::string(subject) + " is not /K=V/...");
  std::size_t at = 1;
  bool joins_previous = false;
  while (at < subject.size()) {
    const std::size_t next = subject.find_first_of("/+", at);
    const std::string_view attribute = subject.substr(at, next == std::string_view::npos ? next : next - at);
    const std::size_t equals = attribute.find('=');
    if (equals == std::string_view::npos) return failure("the subject " + std::string(subject) + " is not /K=V/...");
    const std::string field(attribute.substr(0, equals));
    const std::string value(attribute.substr(equals + 1));
    FERRY_TRY(need(X509_NAME_add_entry_by_txt(name.get(), field.c_str(), MBSTRING_UTF8,
                                              reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                              joins_previous ? -1 : 0) == 1,
                   "X509_NAME_add_entry_by_txt"));
    if (next == std::string_view::npos) break;
    joins_previous = subject[next] == '+';
    at = next + 1;
  }
  return name;
}

tls_result<void> add_extension(X509* certificate, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  const extension_ptr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()));
  FERRY_TRY(need(extension != nullptr, "X509V3_EXT_conf_nid"));
  return need(X509_add_ext(certificate, extension.get(), -1) == 1, "X509_add_ext");
}

}  // namespace

tls_result<pkey_ptr> new_key() {
  pkey_ptr key(EVP_EC_gen("P-256"));
  FERRY_TRY(need(key != nullptr, "EVP_EC_gen"));
  return key;
}

tls_result<x509_ptr> issue_certificate(const certificate_request& request, EVP_PKEY* key, X509* issuer,
                                       EVP_PKEY* issuer_key) {
  x509_ptr certificate(X509_new());
  FERRY_TRY(need(certificate != nullptr && X509_set_version(certificate.get(), X509_VERSION_3) == 1, "X509_new"));
  std::uint64_t serial = 0;
  FERRY_TRY(need(RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial) == 1, "RAND_bytes"));
  FERRY_TRY(need(ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate.get()), serial >> 1U) == 1, "serial"));
  FERRY_TRY(need(X509_gmtime_adj(X509_getm_notBefore(certificate.get()), request.not_before.count()) != nullptr &&
                     X509_gmtime_adj(X509_getm_notAfter(certificate.get()), request.not_after.count()) != nullptr,
                 "validity"));
  FERRY_TRY(auto subject, parse_subject(request.subject));
  FERRY_TRY(need(X509_set_subject_name(certificate.get(), subject.get()) == 1, "subject"));
  X509* signer = issuer != nullptr ? issuer : certificate.get();
  FERRY_TRY(need(X509_set_issuer_name(certificate.get(), X509_get_subject_name(signer)) == 1, "issuer"));
  FERRY_TRY(need(X509_set_pubkey(certificate.get(), key) == 1, "public key"));
  FERRY_TRY(add_extension(certificate.get(), signer, NID_basic_constraints,
                          request.is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE"));
  FERRY_TRY(add_extension(certificate.get(), signer, NID_subject_key_identifier, "hash"));
  if (issuer != nullptr) {
    FERRY_TRY(add_extension(certificate.get(), signer, NID_authority_key_identifier, "keyid"));
  }
  if (request.is_ca) {
    FERRY_TRY(add_extension(certificate.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign"));
  }
  std::string names;
  for (const auto& dns : request.dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : request.ip_addresses) names += (names.empty() ? "IP:" : ",IP:") + ip;
  if (!names.empty()) {
    FERRY_TRY(add_extension(certificate.get(), signer, NID_subject_alt_name, names));
  }
  FERRY_TRY(
      need(X509_sign(certificate.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0, "X509_sign"));
  return certificate;
}

std::string certificate_pem(X509* certificate) {
  const bio_ptr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), certificate) != 1) return {};
  return bio_text(bio.get());
}

std::string private_key_pem(EVP_PKEY* key, std::string_view password) {
  const bio_ptr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr) return {};
  std::string pass(password);
  const int written = password.empty()
                          ? PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                          : PEM_write_bio_PKCS8PrivateKey(bio.get(), key, EVP_aes_256_cbc(), pass.data(),
                                                          static_cast<int>(pass.size()), nullptr, nullptr);
  return written == 1 ? bio_text(bio.get()) : std::string();
}

tls_result<pkey_ptr> parse_private_key(const std::string& pem, const std::string& what) {
  const bio_ptr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  pkey_ptr key(bio != nullptr ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (key == nullptr) return failure(what + ": no unencrypted PEM private key");
  return key;
}

bool issued_by(X509* certificate, X509* issuer) {
  EVP_PKEY* issuer_key = X509_get0_pubkey(issuer);
  const bool signed_by = issuer_key != nullptr && X509_verify(certificate, issuer_key) == 1;
  ERR_clear_error();
  return signed_by;
}

}  // namespace ferry::security
