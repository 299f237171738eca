#pragma once

#include <openssl/x509.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "config/listener_security.h"
#include "security/principal_mapper.h"
#include "security/sasl_exchange.h"
#include "security/tls_context.h"

namespace ferry::admin {

// What one request offers to prove who sends it.
struct request_credentials {
  std::string_view authorization;     // the Authorization header; empty when there is none
  const X509* certificate = nullptr;  // the client certificate the TLS handshake verified, if any
  std::string_view client;            // host:port, for the log
};

// What the settings and the metric of one HTTP listener's authenticator are called.
struct authenticator_names {
  std::string setting_prefix = "admin.";
  std::string metric = "ferry_admin_authentications_total";
  std::string listener = "HTTP admin API";
};

struct authentication {
  enum class outcome { allowed, refused, busy };
  outcome result = outcome::refused;
  std::string principal;      // when allowed: the user, or the certificate's mapped subject
  bool failed_login = false;  // credentials were offered and are wrong: the answer waits a while
};

// Decides whether an admin API request may proceed (admin.authentication): paths in
// admin.authentication.exempt.paths always may; others need HTTP Basic credentials that match the user's SCRAM
// credential (SCRAM-SHA-512 when the user has one, else SCRAM-SHA-256; the PBKDF2 runs on the password checker's
// threads) or a verified client certificate whose subject the mapping rules map to a name. Counts each decision
// in ferry_admin_authentications_total{method, result} and logs failures (rate-limited) with the user and the
// client, never the password.
class authenticator {
 public:
  // Refuses admin.ssl.principal.mapping.rules that do not parse (the message names the setting).
  static security::tls_result<std::unique_ptr<authenticator>> create(const config::admin_api_security& settings,
                                                                     const security::credential_source& users,
                                                                     security::password_checker& checker,
                                                                     prometheus::Registry& registry,
                                                                     const authenticator_names& names = {});

  // Whether a request for `path` (without its query) needs a principal.
  [[nodiscard]] bool protects(std::string_view path) const;
  // Whether a refusal invites HTTP Basic credentials (WWW-Authenticate).
  [[nodiscard]] bool challenges_basic() const { return basic_; }
  // Completes on the caller's executor.
  boost::asio::awaitable<authentication> authenticate(request_credentials credentials);

 private:
  authenticator(const config::admin_api_security& settings, std::optional<security::principal_mapper> principals,
                const security::credential_source& users, security::password_checker& checker,
                prometheus::Registry& registry, const authenticator_names& names);
  boost::asio::awaitable<authentication> check_basic(std::string_view authorization, std::string_view client);
  std::optional<std::string> certificate_principal(const X509* certificate, std::string_view client);

  const bool basic_;
  const std::vector<std::string> exempt_paths_;
  const std::optional<security::principal_mapper> principals_;  // when mtls is on
  const security::credential_source& users_;
  security::password_checker& checker_;
  prometheus::Counter& basic_successes_;
  prometheus::Counter& basic_failures_;
  prometheus::Counter& mtls_successes_;
  prometheus::Counter& mtls_failures_;
};

}  // namespace ferry::admin
