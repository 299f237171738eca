#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ssl/context.hpp>
#include <boost/outcome/std_result.hpp>

#include "base/result.h"
#include "config/listeners.h"

namespace ferry::security {

// A value, or why a TLS setting was refused: the message names the setting with its listener prefix
// ("listener.name.external.ssl.keystore.location: ...") and never holds a key or a password.
template <typename T>
using tls_result = boost::outcome_v2::std_result<T, std::string, boost::outcome_v2::policy::terminate>;

template <auto Free>
struct openssl_deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using x509_ptr = std::unique_ptr<X509, openssl_deleter<X509_free>>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter<EVP_PKEY_free>>;
using bio_ptr = std::unique_ptr<BIO, openssl_deleter<BIO_free_all>>;

// The PEM texts a listener's TLS settings name, read from their files or taken inline.
struct tls_material {
  std::string key;         // the private key (a keystore file's whole text when ssl.keystore.location is set)
  std::string chain;       // the certificate chain, leaf first (the same text as `key` for a keystore file)
  std::string truststore;  // CA certificates; empty when no truststore is set
  // The settings each came from (with the listener prefix), for messages.
  std::string key_setting;
  std::string chain_setting;
  std::string truststore_setting;
};

// A file's whole text (PEM, a password); the message names `setting` when it cannot be read.
tls_result<void> read_text_file(const std::string& path, const std::string& setting, std::string& text);

// Reads the files the settings name (ssl.keystore.location, ssl.truststore.location) or takes the inline PEM.
// `setting_prefix` is what precedes "ssl." in the settings' names ("" or "listener.name.<name>.").
tls_result<tls_material> read_tls_material(const config::tls_settings& settings, std::string_view setting_prefix);

// A TLS server context for a listener: its key and chain, the truststore for client certificates and
// ssl.client.auth, ssl.enabled.protocols and ssl.cipher.suites. Refuses an unreadable file, a missing key or
// certificate, a key that does not match its certificate, a certificate outside its validity, and client
// authentication without a truststore. Stateful session caching is off: one ticket per full handshake resumes
// the client's next session.
tls_result<std::shared_ptr<boost::asio::ssl::context>> make_server_context(const config::tls_settings& settings,
                                                                           const tls_material& material,
                                                                           std::string_view setting_prefix);
tls_result<std::shared_ptr<boost::asio::ssl::context>> make_server_context(const config::tls_settings& settings,
                                                                           std::string_view setting_prefix);

// A TLS client context for the broker's outgoing connections: verifies the peer against the truststore (the
// system's default CA paths when none is set) and presents the keystore when one is set. The host name is checked
// per connection by the caller (SSL_set1_host when settings.verify_peer_host, and SNI for names).
tls_result<std::shared_ptr<boost::asio::ssl::context>> make_client_context(const config::tls_settings& settings,
                                                                           std::string_view setting_prefix);

// The end of the validity of the certificate a context presents; none when it has none.
std::optional<std::chrono::system_clock::time_point> certificate_not_after(const boost::asio::ssl::context& context);
std::optional<std::chrono::system_clock::time_point> certificate_not_after(const X509& certificate);

// Every certificate in a PEM text, in order; the message names `setting` when one is damaged or there is none.
tls_result<std::vector<x509_ptr>> parse_certificates(const std::string& pem, const std::string& setting);

}  // namespace ferry::security
