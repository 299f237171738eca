#include "kafka/client_settings.h"

#include <utility>

#include "security/password_file.h"
#include "security/sasl_client.h"

namespace ferry::kafka {

using boost::outcome_v2::failure;

std::string check_settings(const client_settings& s) {
  if (s.security_protocol != "PLAINTEXT" && s.security_protocol != "SSL" && s.security_protocol != "SASL_PLAINTEXT" &&
      s.security_protocol != "SASL_SSL")
    return "--kafka-security-protocol " + s.security_protocol + ": must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL";
  if (s.sasl_mechanism != "PLAIN" && s.sasl_mechanism != "SCRAM-SHA-256" && s.sasl_mechanism != "SCRAM-SHA-512")
    return "--kafka-sasl-mechanism " + s.sasl_mechanism + ": must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512";
  if (s.uses_sasl() && (s.sasl_username.empty() || s.sasl_password_file.empty()))
    return "--kafka-security-protocol " + s.security_protocol +
           " needs --kafka-sasl-username and --kafka-sasl-password-file";
  if (!s.uses_sasl() && (!s.sasl_username.empty() || !s.sasl_password_file.empty()))
    return "--kafka-sasl-username and --kafka-sasl-password-file need --kafka-security-protocol SASL_PLAINTEXT or "
           "SASL_SSL";
  if (s.ssl_certificate_file.empty() != s.ssl_key_file.empty())
    return "--kafka-ssl-certificate-file and --kafka-ssl-key-file go together";
  if (!s.uses_tls() && (!s.ssl_ca_file.empty() || !s.ssl_certificate_file.empty()))
    return "--kafka-ssl-* files need --kafka-security-protocol SSL or SASL_SSL";
  return {};
}

security::tls_result<void> read_password(const client_settings& settings, std::string& password) {
  return security::read_password_file(settings.sasl_password_file, "--kafka-sasl-password-file", password);
}

security::tls_result<net::peer_security> read_peer_security(const client_settings& settings) {
  net::peer_security peer;
  peer.client_id = "ferry-operator";
  peer.login_setting = "--kafka-sasl-username";
  peer.mechanism_setting = "--kafka-sasl-mechanism";
  if (settings.uses_tls()) {
    config::tls_settings tls;
    if (!settings.ssl_ca_file.empty()) {
      FERRY_TRY(security::read_text_file(settings.ssl_ca_file, "--kafka-ssl-ca-file", tls.truststore_certificates));
    }
    if (!settings.ssl_certificate_file.empty()) {
      FERRY_TRY(security::read_text_file(settings.ssl_certificate_file, "--kafka-ssl-certificate-file",
                                         tls.keystore_certificate_chain));
      FERRY_TRY(security::read_text_file(settings.ssl_key_file, "--kafka-ssl-key-file", tls.keystore_key));
    }
    auto context = security::make_client_context(tls, "");
    if (!context) return failure("the operator's Kafka TLS files (--kafka-ssl-*): " + context.error());
    peer.tls = [context = std::move(context).value()] { return context; };
    peer.verify_host = settings.ssl_verify_hostname;
  }
  if (settings.uses_sasl()) {
    std::string password;
    FERRY_TRY(read_password(settings, password));
    auto exchanges =
        security::make_sasl_client_factory(settings.sasl_mechanism, settings.sasl_username, std::move(password));
    if (!exchanges) return failure("--kafka-sasl-mechanism " + settings.sasl_mechanism + ": not supported");
    peer.sasl_mechanism = settings.sasl_mechanism;
    peer.sasl_exchange = std::move(exchanges).value();
  }
  return peer;
}

}  // namespace ferry::kafka
