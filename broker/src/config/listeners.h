#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::config {

// A setting that cannot be used; the message names it.
class config_exception : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// listener.security.protocol.map's protocols (Kafka's SecurityProtocol).
enum class security_protocol { plaintext, ssl, sasl_plaintext, sasl_ssl };
std::string_view name_of(security_protocol p);
[[nodiscard]] inline bool uses_tls(security_protocol p) {
  return p == security_protocol::ssl || p == security_protocol::sasl_ssl;
}
[[nodiscard]] inline bool uses_sasl(security_protocol p) {
  return p == security_protocol::sasl_plaintext || p == security_protocol::sasl_ssl;
}

// ssl.client.auth
enum class client_auth { none, requested, required };

// A listener's TLS settings, by Kafka's names (each may carry the listener.name.<name>. prefix). Keys and
// certificates are PEM (ssl.keystore.type=PEM): a file (ssl.keystore.location, holding the PKCS#8 private key
// and the certificate chain) or inline text. Exactly one of keystore_location and the inline pair is set.
struct tls_settings {
  std::string keystore_location;                                     // ssl.keystore.location
  std::string keystore_certificate_chain;                            // ssl.keystore.certificate.chain (inline PEM)
  std::string keystore_key;                                          // ssl.keystore.key (inline PEM, PKCS#8)
  std::string key_password;                                          // ssl.key.password: for an ENCRYPTED PRIVATE KEY
  std::string truststore_location;                                   // ssl.truststore.location: PEM CA certificates
  std::string truststore_certificates;                               // ssl.truststore.certificates (inline PEM)
  client_auth client_authentication = client_auth::none;             // ssl.client.auth
  std::vector<std::string> enabled_protocols{"TLSv1.2", "TLSv1.3"};  // ssl.enabled.protocols
  std::vector<std::string> cipher_suites;  // ssl.cipher.suites (IANA or OpenSSL names); empty: OpenSSL's defaults
  std::string principal_mapping_rules = "DEFAULT";  // ssl.principal.mapping.rules (KIP-371)
  // ssl.endpoint.identification.algorithm: "https" (the default) makes the broker's own outgoing connections
  // check the peer's certificate against the host name they dial; "" does not.
  bool verify_peer_host = true;

  bool operator==(const tls_settings&) const = default;
};

// A listener's SASL settings.
struct sasl_settings {
  std::vector<std::string> enabled_mechanisms;  // sasl.enabled.mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
  std::int64_t max_reauth_ms = 0;               // connections.max.reauth.ms (KIP-368); 0: sessions never expire
};

struct endpoint {
  std::string host;  // empty: all interfaces (for a listener)
  std::uint16_t port = 0;
};

// One Kafka listener: its name, where it accepts connections, and the address brokers and clients are told to
// use. A broker answers Metadata and FindCoordinator with every broker's address on the listener the request
// came in on, so clients inside and outside a network each get addresses they can reach.
struct listener_config {
  std::string name;                    // upper case: PLAINTEXT, INTERNAL, EXTERNAL, ...
  endpoint bind;                       // listeners
  std::optional<endpoint> advertised;  // advertised.listeners; none: registered nowhere, as in Kafka
  security_protocol protocol = security_protocol::plaintext;  // listener.security.protocol.map
  tls_settings tls;                                           // when uses_tls(protocol)
  sasl_settings sasl;                                         // when uses_sasl(protocol)
};

// The broker's own login on a SASL inter-broker listener. The password never sits in a settings line: it is
// read from a file (inter.broker.sasl.password.file) or from FERRY_INTER_BROKER_SASL_PASSWORD by the app.
struct inter_broker_sasl {
  std::string mechanism;      // sasl.mechanism.inter.broker.protocol
  std::string username;       // inter.broker.sasl.username (Ferry)
  std::string password_file;  // inter.broker.sasl.password.file (Ferry)
};

struct listeners_config {
  std::vector<listener_config> listeners{{"PLAINTEXT", {"", 9092}, std::nullopt}};
  std::string inter_broker = "PLAINTEXT";             // inter.broker.listener.name: always an advertised listener
  inter_broker_sasl inter_broker_login;               // when the inter-broker listener uses SASL
  std::int32_t sasl_max_receive_bytes = 524288;       // sasl.server.max.receive.size
  std::int32_t failed_authentication_delay_ms = 100;  // connection.failed.authentication.delay.ms

  // The listener other brokers (replication, the operator) reach this one through.
  [[nodiscard]] const listener_config& inter_broker_listener() const;
};

// Whether `key` is one of the settings parse_listeners reads.
bool is_listener_setting(const std::string& key);

// Reads listeners, advertised.listeners, listener.security.protocol.map, inter.broker.listener.name (or
// security.inter.broker.protocol) and each listener's TLS and SASL settings (config/listener_security.h) with
// Kafka's defaults and rules: unique names, every advertised listener also a listener, the inter-broker
// listener advertised. An advertised listener without a host (or 0.0.0.0) advertises this machine's name.
// Throws config_exception naming the setting.
listeners_config parse_listeners(const std::map<std::string, std::string>& settings);

}  // namespace ferry::config
