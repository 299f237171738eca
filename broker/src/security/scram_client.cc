#include "security/scram_client.h"

#include <openssl/crypto.h>

#include <utility>

#include "security/errc.h"
#include "security/scram_messages.h"

namespace ferry::security {
namespace {

// Random bytes in the client nonce, written in base64 (as the server's).
constexpr std::size_t client_nonce_bytes = 24;

}  // namespace

scram_client::scram_client(scram_mechanism m, std::string user, std::string password)
    : scram_client(m, std::move(user), std::move(password), base64_encode(random_bytes(client_nonce_bytes))) {}

scram_client::scram_client(scram_mechanism m, std::string user, std::string password, std::string client_nonce)
    : mechanism_(m), user_(std::move(user)), password_(std::move(password)), client_nonce_(std::move(client_nonce)) {}

scram_client::~scram_client() { OPENSSL_cleanse(password_.data(), password_.size()); }

std::string scram_client::first_message() const { return format_client_first(user_, client_nonce_); }

result<std::string> scram_client::final_message(std::string_view server_first) {
  FERRY_TRY(const auto first, parse_server_first(server_first));
  // As Kafka's ScramSaslClient: a server that does not extend our nonce is not answering our exchange, and one
  // asking for few iterations wants a password hash that is cheap to crack.
  if (first.nonce.size() <= client_nonce_.size() || !first.nonce.starts_with(client_nonce_)) return errc::bad_nonce;
  if (first.iterations < min_scram_iterations || first.iterations > max_scram_iterations) return errc::bad_credential;
  std::string salted = salted_password(mechanism_, password_, first.salt, first.iterations);
  std::string key = client_key(mechanism_, salted);
  const scram_credential credential = credential_from_salted_password(mechanism_, first.salt, salted, first.iterations);
  const std::string without_proof = format_client_final_without_proof(first.nonce);
  // client-first-message-bare: the client-first message without its gs2 header "n,,".
  const std::string auth_message = first_message().substr(3) + "," + std::string(server_first) + "," + without_proof;
  const std::string proof = xor_bytes(key, scram_hmac(mechanism_, credential.stored_key, auth_message));
  expected_server_signature_ = scram_hmac(mechanism_, credential.server_key, auth_message);
  OPENSSL_cleanse(salted.data(), salted.size());
  OPENSSL_cleanse(key.data(), key.size());
  return format_client_final(without_proof, proof);
}

result<void> scram_client::verify_server_final(std::string_view server_final) const {
  FERRY_TRY(const auto final_message, parse_server_final(server_final));
  if (!final_message.error.empty()) return errc::bad_proof;
  if (expected_server_signature_.empty() || !constant_time_equal(final_message.signature, expected_server_signature_))
    return errc::bad_server_signature;
  return success();
}

}  // namespace ferry::security
