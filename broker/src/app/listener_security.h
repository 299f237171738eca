#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "config/listeners.h"
#include "net/connection.h"
#include "net/peer_security.h"
#include "security/auth_metrics.h"
#include "security/password_checker_pool.h"
#include "security/principal_mapper.h"
#include "security/sasl_exchange.h"
#include "security/tls_context_source.h"

namespace ferry::app {

// What the Kafka listeners need to secure their connections (TLS contexts that follow their files, the mapping
// of client certificates to principals, SASL sessions over the users' credentials) and the broker's own TLS and
// login toward other brokers. Built at startup from the listeners' settings: a setting that cannot be used (an
// unreadable key, a key that does not match its certificate, a mapping rule that does not parse, no password
// for the inter-broker login) stops startup with a message naming it (std::runtime_error).
class listener_security {
 public:
  listener_security(const config::listeners_config& listeners, std::int32_t max_request_bytes,
                    const security::credential_source& users, const clock& clock, prometheus::Registry& registry);

  // The security of `l`'s connections; l is one of the listeners given. Valid while this lives.
  net::connection_security for_listener(const config::listener_config& l);
  // This broker's connections to other brokers: the inter-broker listener's TLS and login. Valid while this lives.
  [[nodiscard]] const net::peer_security* peer() const { return &peer_; }
  // The inter-broker login's user and password (the app makes sure the user's credential exists); empty user
  // when the inter-broker listener has no SASL.
  [[nodiscard]] const std::string& inter_broker_user() const { return inter_broker_user_; }
  [[nodiscard]] const std::string& inter_broker_password() const { return inter_broker_password_; }
  [[nodiscard]] const std::string& inter_broker_mechanism() const { return inter_broker_mechanism_; }
  // The PBKDF2 checks of PLAIN logins, shared with the admin API's HTTP Basic logins.
  security::password_checker& password_checks() { return password_checks_; }

  // Takes the certificates whose files changed for new connections (a periodic job, off the network threads),
  // and updates the certificates' expiry gauges.
  void reload_changed_files();
  // Points each TLS listener at the files its per-broker dynamic settings name (listener.name.<l>.ssl.keystore.location
  // and .ssl.truststore.location, looked up with `dynamic`), or back at its own files when it has none; files that
  // cannot be used are refused (logged and counted) and the context in use stays. Reads files: off the network threads.
  void use_dynamic_tls_files(const std::function<std::optional<std::string>(const std::string&)>& dynamic);

 private:
  struct tls_listener {
    std::unique_ptr<security::tls_context_source> contexts;
    security::principal_mapper principals;
    prometheus::Counter* handshake_failures = nullptr;
    prometheus::Gauge* not_after = nullptr;
    prometheus::Counter* reloads = nullptr;
    prometheus::Counter* refused_reloads = nullptr;
    std::uint64_t counted_reloads = 0;  // what the counters have so far
    std::uint64_t counted_refused = 0;
    config::listener_config listener;  // as configured, before any dynamic setting
  };

  void read_inter_broker_login(const config::listeners_config& listeners);
  // Rebuilds the context of the broker's own connections to other brokers when the inter-broker listener took
  // other files.
  void follow_inter_broker_files();

  const security::credential_source& users_;
  const clock& clock_;
  security::password_checker_pool password_checks_;
  security::auth_metrics auth_metrics_;
  prometheus::Family<prometheus::Counter>& handshake_failures_;
  prometheus::Family<prometheus::Gauge>& certificate_not_after_;
  prometheus::Family<prometheus::Counter>& reloads_;
  std::map<std::string, tls_listener> tls_;  // by listener name
  std::map<std::string, net::session_factory> sessions_;
  net::peer_security peer_;
  std::mutex peer_tls_mutex_;  // peer_tls_ and peer_tls_reloads_
  std::shared_ptr<boost::asio::ssl::context> peer_tls_;
  const tls_listener* inter_broker_tls_ = nullptr;  // the inter-broker listener's, when it has TLS
  std::uint64_t peer_tls_reloads_ = 0;              // its source's reloads when peer_tls_ was built
  std::string inter_broker_user_;
  std::string inter_broker_password_;
  std::string inter_broker_mechanism_;
};

}  // namespace ferry::app
