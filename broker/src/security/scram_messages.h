#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace ferry::security {

// The four messages of a SCRAM exchange (RFC 5802 §7, Kafka's ScramMessages), parsed and written. The server's
// parsers read bytes from unauthenticated clients: each message is refused above max_scram_message_bytes, and
// what is kept is at most a copy of the input.
inline constexpr std::size_t max_scram_message_bytes = 8192;

// client-first-message: gs2-header client-first-message-bare, where the gs2-header is "n," or "y," (no channel
// binding; "p=" is refused), then an optional "a=<authzid>", then ","; the bare part is
// "n=<saslname>,r=<nonce>" followed by extensions. Errors: malformed_message, bad_channel_binding for "p=",
// unsupported_extension for "tokenauth" (delegation tokens).
struct client_first_message {
  std::string gs2_header;        // as sent, with its final comma: c= must carry exactly these bytes
  std::string authorization_id;  // unescaped; empty when absent
  std::string user;              // the saslname unescaped (=2C is ',', =3D is '=')
  std::string nonce;
  std::string bare;  // client-first-message-bare as sent: the start of the AuthMessage
};
result<client_first_message> parse_client_first(std::string_view text);
// "n,,n=<user escaped>,r=<nonce>", the form every Kafka client sends.
std::string format_client_first(std::string_view user, std::string_view nonce);

// server-first-message: "r=<client nonce + server nonce>,s=<base64 salt>,i=<iterations>".
struct server_first_message {
  std::string nonce;
  std::string salt;  // raw bytes
  std::int32_t iterations = 0;
};
result<server_first_message> parse_server_first(std::string_view text);
std::string format_server_first(const server_first_message& m);

// client-final-message: "c=<base64 gs2 header>,r=<nonce>[,extensions],p=<base64 proof>".
struct client_final_message {
  std::string channel_binding;  // decoded: the gs2 header the client says it sent
  std::string nonce;
  std::string proof;          // raw bytes
  std::string without_proof;  // client-final-message-without-proof as sent: the end of the AuthMessage
};
result<client_final_message> parse_client_final(std::string_view text);
// The client-final-message-without-proof for `nonce` with no channel binding: "c=biws,r=<nonce>".
std::string format_client_final_without_proof(std::string_view nonce);
// Appends ",p=<base64 proof>".
std::string format_client_final(std::string_view without_proof, std::string_view proof);

// server-final-message: "v=<base64 server signature>", or "e=<error>" (which Kafka never sends).
struct server_final_message {
  std::string error;      // empty unless e=
  std::string signature;  // raw bytes; empty when e=
};
result<server_final_message> parse_server_final(std::string_view text);
std::string format_server_final(std::string_view signature);

}  // namespace ferry::security
