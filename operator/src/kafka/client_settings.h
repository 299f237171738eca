#pragma once

#include <string>

#include "net/peer_security.h"
#include "security/tls_context.h"

namespace ferry::kafka {

// How the operator connects and logs in to the brokers (its --kafka-* flags; docs/operator.md). Files are read
// for each new set of connections, so a renewed certificate or a rotated password (a Secret's mounted files) is
// used from the next reconcile on.
struct client_settings {
  std::string listener;                         // --kafka-listener; empty: the first one each broker registered
  std::string security_protocol = "PLAINTEXT";  // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
  std::string sasl_mechanism = "SCRAM-SHA-512";
  std::string sasl_username;
  std::string sasl_password_file;  // its first line is the password
  std::string ssl_ca_file;         // PEM CA certificates; empty: the system's
  std::string ssl_certificate_file;
  std::string ssl_key_file;  // with ssl_certificate_file: a client certificate (mTLS)
  bool ssl_verify_hostname = true;

  [[nodiscard]] bool uses_tls() const { return security_protocol == "SSL" || security_protocol == "SASL_SSL"; }
  [[nodiscard]] bool uses_sasl() const {
    return security_protocol == "SASL_PLAINTEXT" || security_protocol == "SASL_SSL";
  }
};

// Why the settings do not fit together, naming the flag; empty when they do. Reads no file.
std::string check_settings(const client_settings& settings);

// The TLS and login of new connections, from the files the settings name as they are now; the message names
// the flag of a file that cannot be read or used.
security::tls_result<net::peer_security> read_peer_security(const client_settings& settings);

// The password in --kafka-sasl-password-file: its first line.
security::tls_result<void> read_password(const client_settings& settings, std::string& password);

}  // namespace ferry::kafka
