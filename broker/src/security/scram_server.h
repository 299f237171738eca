#pragma once

#include <memory>
#include <string>

#include "security/sasl_exchange.h"

namespace ferry::security {

// Random bytes in the server's part of the nonce; their base64 (without padding) is what is sent.
inline constexpr std::size_t scram_server_nonce_bytes = 24;

// make_scram_exchange with a fixed server nonce instead of a random one: for tests that replay a known
// exchange (RFC 7677 §3). `server_nonce` must be printable (RFC 5802 §7).
std::unique_ptr<sasl_server_exchange> make_scram_exchange(scram_mechanism m, const credential_source& users,
                                                          std::string server_nonce);

}  // namespace ferry::security
