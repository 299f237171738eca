#include "security/errc.h"

#include "base/error_category.h"

namespace ferry::security {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::malformed_message:
      return "malformed SASL message";
    case errc::unknown_user:
      return "unknown user";
    case errc::bad_password:
      return "wrong password";
    case errc::bad_proof:
      return "SCRAM client proof does not verify (wrong password)";
    case errc::bad_nonce:
      return "SCRAM client-final nonce does not match the server's";
    case errc::bad_channel_binding:
      return "SCRAM channel binding is not 'biws' (channel binding is not supported)";
    case errc::authorization_id_mismatch:
      return "authorization id differs from the user name";
    case errc::unsupported_extension:
      return "unsupported SCRAM extension";
    case errc::unexpected_message:
      return "SASL message out of order";
    case errc::busy:
      return "too many password checks queued";
    case errc::bad_credential:
      return "stored SCRAM credential is malformed";
    case errc::tls_setting:
      return "TLS setting cannot be used";
    case errc::bad_server_signature:
      return "SCRAM server signature does not verify (the server does not hold this user's credential)";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("security", describe);
  return instance;
}

}  // namespace ferry::security
