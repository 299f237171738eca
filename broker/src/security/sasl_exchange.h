#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "base/result.h"
#include "security/scram_credential.h"

namespace ferry::security {

// The users' stored credentials, as the SASL mechanisms look them up (credential_store implements it).
class credential_source {
 public:
  virtual ~credential_source() = default;
  [[nodiscard]] virtual std::optional<scram_credential> find(std::string_view user, scram_mechanism m) const = 0;
};

// Runs the slow part of a PLAIN login (PBKDF2 over the stored credential's salt and iterations) off the network
// threads, a bounded number at a time, so a storm of logins cannot stall produce and fetch.
class password_checker {
 public:
  virtual ~password_checker() = default;
  // Whether `password` is the one `credential` was made from; errc::busy when too many checks wait already.
  // Completes on the caller's executor.
  virtual boost::asio::awaitable<result<bool>> check(scram_mechanism m, scram_credential credential,
                                                     std::string password) = 0;
};

// The server side of one SASL authentication with one mechanism: the client's tokens in, the server's out.
class sasl_server_exchange {
 public:
  virtual ~sasl_server_exchange() = default;
  // The answer to the client's next token. An error ends the authentication (SASL_AUTHENTICATION_FAILED);
  // its message is for the broker's log.
  virtual boost::asio::awaitable<result<std::string>> respond(std::string_view client_token) = 0;
  // Whether the exchange has ended with the client authenticated.
  [[nodiscard]] virtual bool complete() const = 0;
  // The user name the client presented (for logs and metrics even when it failed); empty before it has.
  // Once complete(), the authenticated user: the principal is User:<user>.
  [[nodiscard]] virtual const std::string& user() const = 0;
};

// PLAIN (RFC 4616), checked against the user's stored SCRAM credential (SCRAM-SHA-512 if the user has one,
// else SCRAM-SHA-256), so there is one user store.
std::unique_ptr<sasl_server_exchange> make_plain_exchange(const credential_source& users, password_checker& checker);
// SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, 7677).
std::unique_ptr<sasl_server_exchange> make_scram_exchange(scram_mechanism m, const credential_source& users);

}  // namespace ferry::security
