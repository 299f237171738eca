#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "security/scram_credential.h"

namespace ferry::security {

// The client side of one SCRAM exchange (RFC 5802 §3, as Kafka's ScramSaslClient): the broker's own logins to
// other brokers, and tests. Call first_message(), then final_message() with the server-first, then
// verify_server_final() with the server-final; each at most once, in that order. Not thread-safe.
class scram_client {
 public:
  scram_client(scram_mechanism m, std::string user, std::string password);
  // With a fixed client nonce instead of a random one (tests replaying a known exchange). Printable.
  scram_client(scram_mechanism m, std::string user, std::string password, std::string client_nonce);
  ~scram_client();
  scram_client(const scram_client&) = delete;
  scram_client& operator=(const scram_client&) = delete;

  // client-first-message: "n,,n=<user>,r=<nonce>".
  [[nodiscard]] std::string first_message() const;
  // client-final-message for the server-first. Runs PBKDF2 (milliseconds: not on a network thread).
  // errc::bad_nonce when the server's nonce does not extend ours, errc::bad_credential for fewer than
  // min_scram_iterations or more than max_scram_iterations, errc::malformed_message for anything unparsable.
  result<std::string> final_message(std::string_view server_first);
  // Whether the server knows our credential: errc::bad_server_signature when its signature is not the one
  // expected, errc::bad_proof when it sent e= instead.
  result<void> verify_server_final(std::string_view server_final) const;

 private:
  const scram_mechanism mechanism_;
  const std::string user_;
  std::string password_;
  const std::string client_nonce_;
  std::string expected_server_signature_;  // set by final_message
};

}  // namespace ferry::security
