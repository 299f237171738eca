#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace ferry::security {

// SCRAM's hash functions, with Kafka's type ids (DescribeUserScramCredentials / AlterUserScramCredentials).
enum class scram_mechanism : std::int8_t { sha256 = 1, sha512 = 2 };

std::string_view name_of(scram_mechanism m);                                  // "SCRAM-SHA-256"
std::optional<scram_mechanism> scram_mechanism_named(std::string_view name);  // the SASL mechanism name
std::optional<scram_mechanism> scram_mechanism_of_type(std::int8_t type);     // 1 or 2
std::size_t digest_bytes(scram_mechanism m);                                  // 32 or 64

// Kafka's bounds on a stored credential's iteration count (ScramMechanism, AlterUserScramCredentials).
inline constexpr std::int32_t min_scram_iterations = 4096;
inline constexpr std::int32_t max_scram_iterations = 16384;

// What the broker keeps of a user's password for one mechanism (RFC 5802): never the password itself.
// Byte strings are raw (not base64).
struct scram_credential {
  std::string salt;
  std::string stored_key;  // H(HMAC(SaltedPassword, "Client Key"))
  std::string server_key;  // HMAC(SaltedPassword, "Server Key")
  std::int32_t iterations = min_scram_iterations;

  bool operator==(const scram_credential&) const = default;
};

// Kafka's text form in /config/users/<user>: "salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>".
std::string format_credential(const scram_credential& c);
// errc::bad_credential for anything else, or keys whose length is not the mechanism's digest size.
result<scram_credential> parse_credential(scram_mechanism m, std::string_view text);

// The credential from a salted password a client computed (AlterUserScramCredentials): two HMACs, cheap.
scram_credential credential_from_salted_password(scram_mechanism m, std::string_view salt,
                                                 std::string_view salted_password, std::int32_t iterations);
// The credential from a password: PBKDF2 with `iterations` rounds, milliseconds of CPU. Never call it on a
// network thread.
scram_credential derive_credential(scram_mechanism m, std::string_view password, std::string_view salt,
                                   std::int32_t iterations);
// Whether `password` is the one `c` was made from: PBKDF2 again (slow, as above), compared in constant time.
bool password_matches(scram_mechanism m, const scram_credential& c, std::string_view password);

// A process's own login (the brokers' inter-broker user, the operator's user) as its user's entries in
// /config/users/<user> hold it: no credential of `m` yet, one made from `password`, or one of another password.
enum class own_credential { missing, matches, differs };
own_credential find_own_credential(scram_mechanism m, const std::map<std::string, std::string>& user_config,
                                   std::string_view password);
// A credential of `m` for `password` with a random salt and Kafka's minimum iterations, in Kafka's text form.
std::string new_credential_text(scram_mechanism m, std::string_view password);

// SCRAM's functions (RFC 5802 §2.2, §3), shared by the credential, the server and the client.
std::string scram_hash(scram_mechanism m, std::string_view data);                        // H()
std::string scram_hmac(scram_mechanism m, std::string_view key, std::string_view data);  // HMAC()
// Hi(): PBKDF2 with `iterations` rounds; slow, as derive_credential.
std::string salted_password(scram_mechanism m, std::string_view password, std::string_view salt,
                            std::int32_t iterations);
std::string client_key(scram_mechanism m, std::string_view salted_password);  // HMAC(SaltedPassword, "Client Key")
// The bytewise XOR of two strings of the same length (ClientProof, and the ClientKey back from it).
std::string xor_bytes(std::string_view a, std::string_view b);
// Whether the two are equal, in a time that does not depend on where they differ (CVE-2021-38153).
bool constant_time_equal(std::string_view a, std::string_view b);

// `count` random bytes from OpenSSL's generator (salts, nonces).
std::string random_bytes(std::size_t count);

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);  // nullopt when not valid base64

}  // namespace ferry::security
