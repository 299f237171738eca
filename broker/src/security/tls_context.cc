#include "security/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "security/principal_mapper.h"

namespace ferry::security {
namespace {

namespace ssl = boost::asio::ssl;
using boost::outcome_v2::failure;
using ssl_ctx_ptr = std::unique_ptr<SSL_CTX, openssl_deleter<SSL_CTX_free>>;

// OpenSSL keeps errors in a per-thread queue that a later call on this thread (a connection's handshake) would
// misread, so every builder leaves it empty.
struct error_queue_guard {
  error_queue_guard() = default;
  error_queue_guard(const error_queue_guard&) = delete;
  error_queue_guard& operator=(const error_queue_guard&) = delete;
  ~error_queue_guard() { ERR_clear_error(); }
};

std::string openssl_reason() {
  const unsigned long code = ERR_peek_last_error();
  if (code == 0) return "unknown OpenSSL error";
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : "OpenSSL error " + std::to_string(code);
}

bio_ptr memory_bio(const std::string& text) {
  return bio_ptr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Hands ssl.key.password to OpenSSL; without one an encrypted key fails instead of prompting on a terminal.
int key_password_callback(char* buffer, int size, int /*rwflag*/, void* user) {
  const auto* password = static_cast<const std::string*>(user);
  if (password->empty() || password->size() > static_cast<std::size_t>(size)) return 0;
  // NOLINTNEXTLINE(bugprone-not-null-terminated-result): OpenSSL takes the length, not a terminator
  std::memcpy(buffer, password->data(), password->size());
  return static_cast<int>(password->size());
}

tls_result<pkey_ptr> parse_key(const tls_material& material, const config::tls_settings& settings,
                               const std::string& prefix) {
  const std::string password_setting = prefix + "ssl.key.password";
  if (material.key.find("PRIVATE KEY-----") == std::string::npos)
    return failure(material.key_setting + ": no private key (a PEM \"PRIVATE KEY\" block)");
  bio_ptr bio = memory_bio(material.key);
  // OpenSSL passes its callback a void*; the callback only reads it.
  auto* password = const_cast<std::string*>(&settings.key_password);
  pkey_ptr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, key_password_callback, password));
  if (key) return key;
  if (material.key.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") != std::string::npos) {
    if (settings.key_password.empty())
      return failure(material.key_setting + ": the private key is encrypted and " + password_setting + " is not set");
    return failure(material.key_setting + ": cannot decrypt the private key with " + password_setting + " (" +
                   openssl_reason() + ")");
  }
  return failure(material.key_setting + ": cannot read the private key (" + openssl_reason() + ")");
}

std::optional<std::chrono::system_clock::time_point> to_time_point(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string describe_time(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return "an unreadable time";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

tls_result<void> check_validity(const std::vector<x509_ptr>& chain, const std::string& setting) {
  for (const auto& certificate : chain) {
    const ASN1_TIME* not_after = X509_get0_notAfter(certificate.get());
    const ASN1_TIME* not_before = X509_get0_notBefore(certificate.get());
    if (X509_cmp_current_time(not_after) <= 0)
      return failure(setting + ": the certificate " + distinguished_name(certificate.get()) + " expired at " +
                     describe_time(not_after));
    if (X509_cmp_current_time(not_before) >= 0)
      return failure(setting + ": the certificate " + distinguished_name(certificate.get()) + " is not valid before " +
                     describe_time(not_before));
  }
  return boost::outcome_v2::success();
}

tls_result<void> use_keystore(SSL_CTX* context, const config::tls_settings& settings, const tls_material& material,
                              const std::string& prefix) {
  if (material.key.empty() && material.chain.empty())
    return failure(prefix + "ssl.keystore.location: not set (nor " + prefix + "ssl.keystore.key and " + prefix +
                   "ssl.keystore.certificate.chain)");
  if (material.chain.empty()) return failure(material.chain_setting + ": not set (" + material.key_setting + " is)");
  if (material.key.empty()) return failure(material.key_setting + ": not set (" + material.chain_setting + " is)");
  FERRY_TRY(auto chain, parse_certificates(material.chain, material.chain_setting));
  FERRY_TRY(auto key, parse_key(material, settings, prefix));
  FERRY_TRY(check_validity(chain, material.chain_setting));
  X509* leaf = chain.front().get();
  if (X509_check_private_key(leaf, key.get()) != 1) {
    const std::string where = material.key_setting == material.chain_setting ? "" : " in " + material.chain_setting;
    return failure(material.key_setting + ": the private key does not match the certificate " +
                   distinguished_name(leaf) + where);
  }
  if (SSL_CTX_use_certificate(context, leaf) != 1 || SSL_CTX_use_PrivateKey(context, key.get()) != 1)
    return failure(material.chain_setting + ": OpenSSL refused the certificate or key (" + openssl_reason() + ")");
  for (std::size_t i = 1; i < chain.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(context, chain[i].get()) != 1)
      return failure(material.chain_setting + ": OpenSSL refused a chain certificate (" + openssl_reason() + ")");
  }
  return boost::outcome_v2::success();
}

tls_result<void> use_truststore(SSL_CTX* context, const tls_material& material, bool tell_clients) {
  FERRY_TRY(auto authorities, parse_certificates(material.truststore, material.truststore_setting));
  X509_STORE* store = SSL_CTX_get_cert_store(context);
  for (const auto& authority : authorities) {
    if (X509_STORE_add_cert(store, authority.get()) != 1)
      return failure(material.truststore_setting + ": OpenSSL refused a certificate (" + openssl_reason() + ")");
    // The CertificateRequest names the accepted issuers, so a client with several certificates picks the right one.
    if (tell_clients && SSL_CTX_add_client_CA(context, authority.get()) != 1)
      return failure(material.truststore_setting + ": OpenSSL refused a certificate (" + openssl_reason() + ")");
  }
  return boost::outcome_v2::success();
}

// Whether `name` is OpenSSL's own name of a TLS 1.2 (or older) cipher suite, such as ECDHE-RSA-AES128-GCM-SHA256.
bool is_openssl_cipher_name(std::string_view name) {
  ssl_ctx_ptr probe(SSL_CTX_new(TLS_method()));
  if (!probe || SSL_CTX_set_cipher_list(probe.get(), "ALL:COMPLEMENTOFALL") != 1) return false;
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(probe.get());
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    if (name == SSL_CIPHER_get_name(sk_SSL_CIPHER_value(ciphers, i))) return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ":") + name;
  return out;
}

tls_result<void> use_protocols_and_suites(SSL_CTX* context, const config::tls_settings& settings,
                                          const std::string& prefix) {
  const std::string protocols_setting = prefix + "ssl.enabled.protocols";
  const std::string suites_setting = prefix + "ssl.cipher.suites";
  int lowest = 0;
  int highest = 0;
  for (const auto& protocol : settings.enabled_protocols) {
    int version = 0;
    if (protocol == "TLSv1.2") version = TLS1_2_VERSION;
    if (protocol == "TLSv1.3") version = TLS1_3_VERSION;
    if (version == 0)
      return failure(std::string(protocols_setting)
                         .append(": ")
                         .append(protocol)
                         .append(" is not supported (TLSv1.2, TLSv1.3 are)"));
    lowest = lowest == 0 ? version : std::min(lowest, version);
    highest = std::max(highest, version);
  }
  if (lowest == 0) return failure(protocols_setting + ": no protocol enabled (TLSv1.2, TLSv1.3)");

  // Kafka users write IANA names (Java's); OpenSSL names TLS 1.3 suites the same way and older ones its own way.
  std::vector<std::string> up_to_tls12;
  std::vector<std::string> tls13;
  for (const auto& suite : settings.cipher_suites) {
    const std::string_view openssl_name = OPENSSL_cipher_name(suite.c_str());
    if (openssl_name != "(NONE)") {
      (openssl_name.starts_with("TLS_") ? tls13 : up_to_tls12).emplace_back(openssl_name);
    } else if (is_openssl_cipher_name(suite)) {
      up_to_tls12.push_back(suite);
    } else {
      return failure(std::string(suites_setting).append(": unknown cipher suite ").append(suite));
    }
  }
  if (!settings.cipher_suites.empty()) {
    // A protocol left without any listed suite cannot be negotiated, as with Java.
    if (up_to_tls12.empty()) lowest = std::max(lowest, TLS1_3_VERSION);
    if (tls13.empty()) highest = std::min(highest, TLS1_2_VERSION);
    if (lowest > highest)
      return failure(suites_setting + ": no suite listed is for a protocol of " + protocols_setting);
    if (!up_to_tls12.empty() && SSL_CTX_set_cipher_list(context, join(up_to_tls12).c_str()) != 1)
      return failure(suites_setting + ": OpenSSL refused " + join(up_to_tls12) + " (" + openssl_reason() + ")");
    if (!tls13.empty() && SSL_CTX_set_ciphersuites(context, join(tls13).c_str()) != 1)
      return failure(suites_setting + ": OpenSSL refused " + join(tls13) + " (" + openssl_reason() + ")");
  }
  if (SSL_CTX_set_min_proto_version(context, lowest) != 1 || SSL_CTX_set_max_proto_version(context, highest) != 1)
    return failure(protocols_setting + ": OpenSSL refused the protocol range (" + openssl_reason() + ")");
  return boost::outcome_v2::success();
}

tls_result<std::shared_ptr<ssl::context>> wrap(ssl_ctx_ptr context) {
  return std::make_shared<ssl::context>(context.release());
}

}  // namespace

tls_result<std::vector<x509_ptr>> parse_certificates(const std::string& pem, const std::string& setting) {
  bio_ptr bio = memory_bio(pem);
  std::vector<x509_ptr> certificates;
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certificates.emplace_back(c);
  // The loop ends at the end of the text ("no start line"); anything else is a damaged certificate.
  const unsigned long last = ERR_peek_last_error();
  if (ERR_GET_LIB(last) != ERR_LIB_PEM || ERR_GET_REASON(last) != PEM_R_NO_START_LINE)
    return failure(setting + ": cannot read a certificate (" + openssl_reason() + ")");
  ERR_clear_error();
  if (certificates.empty()) return failure(setting + ": no certificate (a PEM \"CERTIFICATE\" block)");
  return certificates;
}

tls_result<void> read_text_file(const std::string& path, const std::string& setting, std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return failure(setting + ": " + path + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return failure(setting + ": cannot read " + path + ": " + std::generic_category().message(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return failure(setting + ": cannot read " + path);
  text = std::move(contents).str();
  return boost::outcome_v2::success();
}

tls_result<tls_material> read_tls_material(const config::tls_settings& settings, std::string_view setting_prefix) {
  const std::string prefix(setting_prefix);
  tls_material material;
  if (!settings.keystore_location.empty()) {
    material.key_setting = material.chain_setting = prefix + "ssl.keystore.location";
    FERRY_TRY(read_text_file(settings.keystore_location, material.key_setting, material.key));
    material.chain = material.key;
  } else {
    material.key_setting = prefix + "ssl.keystore.key";
    material.chain_setting = prefix + "ssl.keystore.certificate.chain";
    material.key = settings.keystore_key;
    material.chain = settings.keystore_certificate_chain;
  }
  if (!settings.truststore_location.empty()) {
    material.truststore_setting = prefix + "ssl.truststore.location";
    FERRY_TRY(read_text_file(settings.truststore_location, material.truststore_setting, material.truststore));
  } else {
    material.truststore_setting = prefix + "ssl.truststore.certificates";
    material.truststore = settings.truststore_certificates;
  }
  return material;
}

tls_result<std::shared_ptr<ssl::context>> make_server_context(const config::tls_settings& settings,
                                                              const tls_material& material,
                                                              std::string_view setting_prefix) {
  const error_queue_guard guard;
  const std::string prefix(setting_prefix);
  ssl_ctx_ptr context(SSL_CTX_new(TLS_server_method()));
  if (!context) return failure(prefix + "ssl: OpenSSL cannot make a context (" + openssl_reason() + ")");
  FERRY_TRY(use_protocols_and_suites(context.get(), settings, prefix));
  FERRY_TRY(use_keystore(context.get(), settings, material, prefix));
  if (settings.client_authentication != config::client_auth::none) {
    if (material.truststore.empty())
      return failure(prefix + "ssl.client.auth: " +
                     (settings.client_authentication == config::client_auth::required ? "required" : "requested") +
                     " needs a truststore (" + prefix + "ssl.truststore.location or " + prefix +
                     "ssl.truststore.certificates)");
    FERRY_TRY(use_truststore(context.get(), material, true));
    const int mode = settings.client_authentication == config::client_auth::required
                         ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                         : SSL_VERIFY_PEER;
    SSL_CTX_set_verify(context.get(), mode, nullptr);
  }
  // Each connection's session lives in it alone: no server-side cache to keep bounded. Tickets resume sessions;
  // OpenSSL refuses to resume a verified session without an id context. One ticket per handshake, not OpenSSL's
  // two (for clients that open connections in parallel; a Kafka client reconnects one at a time): making a
  // ticket copies the session through DER, client certificate and all, a fifth of a full handshake's cost.
  SSL_CTX_set_session_cache_mode(context.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(context.get(), 1);
  static constexpr unsigned char session_id_context[] = "ferry";
  SSL_CTX_set_session_id_context(context.get(), session_id_context, sizeof session_id_context - 1);
  return wrap(std::move(context));
}

tls_result<std::shared_ptr<ssl::context>> make_server_context(const config::tls_settings& settings,
                                                              std::string_view setting_prefix) {
  FERRY_TRY(auto material, read_tls_material(settings, setting_prefix));
  return make_server_context(settings, material, setting_prefix);
}

tls_result<std::shared_ptr<ssl::context>> make_client_context(const config::tls_settings& settings,
                                                              std::string_view setting_prefix) {
  const error_queue_guard guard;
  const std::string prefix(setting_prefix);
  FERRY_TRY(auto material, read_tls_material(settings, setting_prefix));
  ssl_ctx_ptr context(SSL_CTX_new(TLS_client_method()));
  if (!context) return failure(prefix + "ssl: OpenSSL cannot make a context (" + openssl_reason() + ")");
  FERRY_TRY(use_protocols_and_suites(context.get(), settings, prefix));
  if (!material.key.empty() || !material.chain.empty()) {
    FERRY_TRY(use_keystore(context.get(), settings, material, prefix));
  }
  if (!material.truststore.empty()) {
    FERRY_TRY(use_truststore(context.get(), material, false));
  } else if (SSL_CTX_set_default_verify_paths(context.get()) != 1) {
    return failure(prefix + "ssl.truststore.location: not set, and the system's CA certificates cannot be read (" +
                   openssl_reason() + ")");
  }
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  return wrap(std::move(context));
}

std::optional<std::chrono::system_clock::time_point> certificate_not_after(const boost::asio::ssl::context& context) {
  // Boost offers no const native_handle(); reading the certificate changes nothing.
  const X509* certificate = SSL_CTX_get0_certificate(const_cast<boost::asio::ssl::context&>(context).native_handle());
  if (certificate == nullptr) return std::nullopt;
  return certificate_not_after(*certificate);
}

std::optional<std::chrono::system_clock::time_point> certificate_not_after(const X509& certificate) {
  return to_time_point(X509_get0_notAfter(&certificate));
}

}  // namespace ferry::security
