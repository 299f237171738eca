#include "security/scram_credential.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "base/log.h"
#include "security/errc.h"

namespace ferry::security {
namespace {

// OpenSSL's hash and HMAC calls fail only when memory or the library itself is broken; going on would hand out
// predictable nonces or wrong keys, so the broker stops instead.
[[noreturn]] void crypto_failure(const char* call) {
  std::array<char, 256> reason{};
  ERR_error_string_n(ERR_get_error(), reason.data(), reason.size());
  FERRY_LOG(error, "security") << call << " failed: " << reason.data();
  std::abort();
}

const EVP_MD* digest_of(scram_mechanism m) { return m == scram_mechanism::sha256 ? EVP_sha256() : EVP_sha512(); }

const unsigned char* bytes_of(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

int int_size(std::string_view s) {
  if (s.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) crypto_failure("input size");
  return static_cast<int>(s.size());
}

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

std::optional<std::int32_t> parse_iterations(std::string_view text) {
  std::int32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string_view name_of(scram_mechanism m) { return m == scram_mechanism::sha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512"; }

std::optional<scram_mechanism> scram_mechanism_named(std::string_view name) {
  if (name == "SCRAM-SHA-256") return scram_mechanism::sha256;
  if (name == "SCRAM-SHA-512") return scram_mechanism::sha512;
  return std::nullopt;
}

std::optional<scram_mechanism> scram_mechanism_of_type(std::int8_t type) {
  if (type == static_cast<std::int8_t>(scram_mechanism::sha256)) return scram_mechanism::sha256;
  if (type == static_cast<std::int8_t>(scram_mechanism::sha512)) return scram_mechanism::sha512;
  return std::nullopt;
}

std::size_t digest_bytes(scram_mechanism m) { return m == scram_mechanism::sha256 ? 32 : 64; }

std::string format_credential(const scram_credential& c) {
  std::string text = "salt=" + base64_encode(c.salt);
  text += ",stored_key=" + base64_encode(c.stored_key);
  text += ",server_key=" + base64_encode(c.server_key);
  text += ",iterations=" + std::to_string(c.iterations);
  return text;
}

// Kafka's ScramCredentialUtils.credentialFromString: exactly these four keys, in any order.
result<scram_credential> parse_credential(scram_mechanism m, std::string_view text) {
  std::optional<std::string> salt;
  std::optional<std::string> stored_key;
  std::optional<std::string> server_key;
  std::optional<std::int32_t> iterations;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view field = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const auto equals = field.find('=');
    if (equals == std::string_view::npos || equals == 0) return errc::bad_credential;
    const std::string_view key = field.substr(0, equals);
    const std::string_view value = field.substr(equals + 1);
    if (key == "iterations" && !iterations) {
      iterations = parse_iterations(value);
      if (!iterations) return errc::bad_credential;
      continue;
    }
    std::optional<std::string>* target = nullptr;
    if (key == "salt") target = &salt;
    if (key == "stored_key") target = &stored_key;
    if (key == "server_key") target = &server_key;
    if (target == nullptr || target->has_value()) return errc::bad_credential;
    *target = base64_decode(value);
    if (!*target) return errc::bad_credential;
  }
  if (!salt || !stored_key || !server_key || !iterations) return errc::bad_credential;
  if (salt->empty() || stored_key->size() != digest_bytes(m) || server_key->size() != digest_bytes(m) ||
      *iterations < min_scram_iterations || *iterations > max_scram_iterations)
    return errc::bad_credential;
  return scram_credential{std::move(*salt), std::move(*stored_key), std::move(*server_key), *iterations};
}

scram_credential credential_from_salted_password(scram_mechanism m, std::string_view salt,
                                                 std::string_view salted_password, std::int32_t iterations) {
  return scram_credential{std::string(salt), scram_hash(m, client_key(m, salted_password)),
                          scram_hmac(m, salted_password, "Server Key"), iterations};
}

scram_credential derive_credential(scram_mechanism m, std::string_view password, std::string_view salt,
                                   std::int32_t iterations) {
  std::string salted = salted_password(m, password, salt, iterations);
  scram_credential c = credential_from_salted_password(m, salt, salted, iterations);
  OPENSSL_cleanse(salted.data(), salted.size());
  return c;
}

bool password_matches(scram_mechanism m, const scram_credential& c, std::string_view password) {
  std::string salted = salted_password(m, password, c.salt, c.iterations);
  std::string key = client_key(m, salted);
  const bool matches = constant_time_equal(scram_hash(m, key), c.stored_key);
  OPENSSL_cleanse(salted.data(), salted.size());
  OPENSSL_cleanse(key.data(), key.size());
  return matches;
}

std::string scram_hash(scram_mechanism m, std::string_view data) {
  std::string out(digest_bytes(m), '\0');
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &length, digest_of(m),
                 nullptr) != 1)
    crypto_failure("EVP_Digest");
  return out;
}

std::string scram_hmac(scram_mechanism m, std::string_view key, std::string_view data) {
  std::string out(digest_bytes(m), '\0');
  unsigned int length = 0;
  if (HMAC(digest_of(m), key.data(), int_size(key), bytes_of(data), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &length) == nullptr)
    crypto_failure("HMAC");
  return out;
}

std::string salted_password(scram_mechanism m, std::string_view password, std::string_view salt,
                            std::int32_t iterations) {
  std::string out(digest_bytes(m), '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), int_size(password), bytes_of(salt), int_size(salt), iterations, digest_of(m),
                        static_cast<int>(out.size()), reinterpret_cast<unsigned char*>(out.data())) != 1)
    crypto_failure("PKCS5_PBKDF2_HMAC");
  return out;
}

std::string client_key(scram_mechanism m, std::string_view salted_password) {
  return scram_hmac(m, salted_password, "Client Key");
}

std::string xor_bytes(std::string_view a, std::string_view b) {
  std::string out(a.size(), '\0');
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) out[i] = static_cast<char>(a[i] ^ b[i]);
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // The lengths are public (the digest size); only the contents must not leak through timing.
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_bytes(std::size_t count) {
  std::string out(count, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), int_size(out)) != 1) crypto_failure("RAND_bytes");
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock writes a terminating NUL
  const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(bytes), int_size(bytes));
  out.resize(static_cast<std::size_t>(length));
  return out;
}

// Standard alphabet with padding, as Java's Base64 encoder writes it; EVP_DecodeBlock alone would also take
// whitespace and count padding as zero bytes.
std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  for (std::size_t i = 0; i < text.size() - padding; ++i)
    if (!is_base64_char(text[i])) return std::nullopt;
  if (text.empty()) return std::string();
  std::string out(text.size() / 4 * 3, '\0');
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(text), int_size(text));
  if (length < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(length) - padding);
  return out;
}

own_credential find_own_credential(scram_mechanism m, const std::map<std::string, std::string>& user_config,
                                   std::string_view password) {
  const auto stored = user_config.find(std::string(name_of(m)));
  if (stored == user_config.end()) return own_credential::missing;
  const auto credential = parse_credential(m, stored->second);
  return credential && password_matches(m, credential.value(), password) ? own_credential::matches
                                                                         : own_credential::differs;
}

std::string new_credential_text(scram_mechanism m, std::string_view password) {
  return format_credential(derive_credential(m, password, random_bytes(32), min_scram_iterations));
}

}  // namespace ferry::security
