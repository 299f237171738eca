#include "security/scram_server.h"

#include <utility>

#include "security/errc.h"
#include "security/scram_messages.h"

namespace ferry::security {
namespace {

// The server side of SCRAM (RFC 5802 §3, as Kafka's ScramSaslServer): client-first in, server-first out;
// client-final in, server-final out. Owned by one connection's session and used from its thread only.
class scram_exchange final : public sasl_server_exchange {
 public:
  scram_exchange(scram_mechanism m, const credential_source& users, std::string server_nonce)
      : mechanism_(m), users_(users), server_nonce_(std::move(server_nonce)) {}

  boost::asio::awaitable<result<std::string>> respond(std::string_view client_token) override {
    co_return step(client_token);
  }
  [[nodiscard]] bool complete() const override { return state_ == state::complete; }
  [[nodiscard]] const std::string& user() const override { return user_; }

 private:
  enum class state { awaiting_client_first, awaiting_client_final, complete, failed };

  result<std::string> step(std::string_view token) {
    // Any token after the end, successful or not, fails.
    result<std::string> reply = errc::unexpected_message;
    if (state_ == state::awaiting_client_first) {
      reply = on_client_first(token);
    } else if (state_ == state::awaiting_client_final) {
      reply = on_client_final(token);
    }
    if (!reply) state_ = state::failed;
    return reply;
  }

  // Answers and moves to awaiting_client_final, or fails: an unknown user fails here, as in Kafka.
  result<std::string> on_client_first(std::string_view token) {
    FERRY_TRY(auto first, parse_client_first(token));
    user_ = first.user;
    if (!first.authorization_id.empty() && first.authorization_id != first.user) return errc::authorization_id_mismatch;
    auto credential = users_.find(first.user, mechanism_);
    if (!credential) return errc::unknown_user;
    server_first_message server_first{first.nonce + server_nonce_, credential->salt, credential->iterations};
    std::string reply = format_server_first(server_first);
    auth_message_prefix_ = first.bare + "," + reply + ",";
    gs2_header_ = std::move(first.gs2_header);
    client_nonce_ = first.nonce;
    nonce_ = std::move(server_first.nonce);
    credential_ = std::move(*credential);
    state_ = state::awaiting_client_final;
    return reply;
  }

  result<std::string> on_client_final(std::string_view token) {
    FERRY_TRY(const auto final_message, parse_client_final(token));
    // c= must carry the exact gs2 header of client-first ("biws" for "n,,"), or a downgrade goes unnoticed.
    if (final_message.channel_binding != gs2_header_) return errc::bad_channel_binding;
    // The nonce of server-first (CVE-2024-56128): a replayed or forged exchange fails here. librdkafka before
    // 2.6.1 (Debian's 2.0.2, kcat) sends its client nonce once more in front of it; Kafka 3.8.1 to 3.9 accept
    // that, and so does Ferry, but nothing else.
    if (final_message.nonce != nonce_ && final_message.nonce != client_nonce_ + nonce_) return errc::bad_nonce;
    if (final_message.proof.size() != digest_bytes(mechanism_)) return errc::bad_proof;
    const std::string auth_message = auth_message_prefix_ + final_message.without_proof;
    const std::string client_signature = scram_hmac(mechanism_, credential_.stored_key, auth_message);
    const std::string client_key = xor_bytes(final_message.proof, client_signature);
    if (!constant_time_equal(scram_hash(mechanism_, client_key), credential_.stored_key)) return errc::bad_proof;
    state_ = state::complete;
    return format_server_final(scram_hmac(mechanism_, credential_.server_key, auth_message));
  }

  const scram_mechanism mechanism_;
  const credential_source& users_;
  const std::string server_nonce_;
  state state_ = state::awaiting_client_first;
  std::string user_;
  // Kept from client-first to client-final.
  std::string gs2_header_;
  std::string client_nonce_;
  std::string nonce_;                // client nonce + server nonce
  std::string auth_message_prefix_;  // client-first-bare "," server-first ","
  scram_credential credential_;
};

// Printable and comma-free, as a nonce must be.
std::string random_server_nonce() {
  static_assert(scram_server_nonce_bytes % 3 == 0, "base64 without padding");
  return base64_encode(random_bytes(scram_server_nonce_bytes));
}

}  // namespace

std::unique_ptr<sasl_server_exchange> make_scram_exchange(scram_mechanism m, const credential_source& users) {
  return make_scram_exchange(m, users, random_server_nonce());
}

std::unique_ptr<sasl_server_exchange> make_scram_exchange(scram_mechanism m, const credential_source& users,
                                                          std::string server_nonce) {
  return std::make_unique<scram_exchange>(m, users, std::move(server_nonce));
}

}  // namespace ferry::security
