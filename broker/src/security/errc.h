#pragma once

#include <system_error>

namespace ferry::security {

// Why an authentication, a credential or a TLS setting was refused. The messages go to the broker's log (never
// to the client, who learns only SASL_AUTHENTICATION_FAILED) and never contain a password or a key.
enum class errc {
  malformed_message = 1,      // a SASL message that does not parse (PLAIN or SCRAM)
  unknown_user,               // no credential for the user and mechanism
  bad_password,               // PLAIN: the password does not match the stored credential
  bad_proof,                  // SCRAM: the client proof does not verify
  bad_nonce,                  // SCRAM: the client-final nonce is not the server's (CVE-2024-56128)
  bad_channel_binding,        // SCRAM: c= is not "biws" (no channel binding)
  authorization_id_mismatch,  // an authzid that differs from the user name (CVE-2017-12610)
  unsupported_extension,      // SCRAM: an extension Ferry does not serve (tokenauth: delegation tokens)
  unexpected_message,         // a message the exchange's state does not allow
  busy,                       // the password checks' queue is full: the login is refused, not queued
  bad_credential,             // a stored credential that does not parse, or iterations out of range
  tls_setting,                // a TLS setting that cannot be used (the message of the result names it)
  bad_server_signature,       // SCRAM client: the server's final signature does not verify (it lacks our credential)
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::security

template <>
struct std::is_error_code_enum<ferry::security::errc> : std::true_type {};
