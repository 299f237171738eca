#include "security/plain.h"

#include <optional>
#include <utility>

#include "security/errc.h"
#include "security/sasl_exchange.h"

namespace ferry::security {

result<plain_message> parse_plain_message(std::string_view token) {
  if (token.size() > max_plain_message_bytes) return errc::malformed_message;
  const auto first_nul = token.find('\0');
  if (first_nul == std::string_view::npos) return errc::malformed_message;
  const auto second_nul = token.find('\0', first_nul + 1);
  if (second_nul == std::string_view::npos || token.find('\0', second_nul + 1) != std::string_view::npos)
    return errc::malformed_message;
  const std::string_view authorization_id = token.substr(0, first_nul);
  const std::string_view user = token.substr(first_nul + 1, second_nul - first_nul - 1);
  const std::string_view password = token.substr(second_nul + 1);
  if (user.empty() || password.empty()) return errc::malformed_message;
  if (!authorization_id.empty() && authorization_id != user) return errc::authorization_id_mismatch;
  return plain_message{std::string(authorization_id), std::string(user), std::string(password)};
}

namespace {

// The server side of PLAIN: one message in, an empty token out. The password is checked against the user's
// stored SCRAM credential on the password checker's threads, not on the connection's. Owned by one
// connection's session and used from its thread only.
class plain_exchange final : public sasl_server_exchange {
 public:
  plain_exchange(const credential_source& users, password_checker& checker) : users_(users), checker_(checker) {}

  boost::asio::awaitable<result<std::string>> respond(std::string_view client_token) override {
    if (state_ != state::awaiting_message) {
      state_ = state::failed;
      co_return errc::unexpected_message;
    }
    state_ = state::failed;  // until the password is checked
    auto message = parse_plain_message(client_token);
    if (!message) co_return message.error();
    user_ = message.value().user;
    auto found = find_credential(user_);
    if (!found) co_return errc::unknown_user;
    auto check = checker_.check(found->first, std::move(found->second), std::move(message.value().password));
    const result<bool> matches = co_await std::move(check);
    if (!matches) co_return matches.error();
    if (!matches.value()) co_return errc::bad_password;
    state_ = state::complete;
    co_return std::string();
  }
  [[nodiscard]] bool complete() const override { return state_ == state::complete; }
  [[nodiscard]] const std::string& user() const override { return user_; }

 private:
  enum class state { awaiting_message, complete, failed };

  // The stronger of the user's credentials: one user store serves PLAIN and SCRAM.
  [[nodiscard]] std::optional<std::pair<scram_mechanism, scram_credential>> find_credential(
      std::string_view user) const {
    for (const auto m : {scram_mechanism::sha512, scram_mechanism::sha256})
      if (auto credential = users_.find(user, m)) return std::pair{m, std::move(*credential)};
    return std::nullopt;
  }

  const credential_source& users_;
  password_checker& checker_;
  state state_ = state::awaiting_message;
  std::string user_;
};

}  // namespace

std::unique_ptr<sasl_server_exchange> make_plain_exchange(const credential_source& users, password_checker& checker) {
  return std::make_unique<plain_exchange>(users, checker);
}

}  // namespace ferry::security
