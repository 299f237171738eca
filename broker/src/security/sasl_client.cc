#include "security/sasl_client.h"

#include <utility>

#include "security/errc.h"
#include "security/scram_client.h"

namespace ferry::security {
namespace {

class plain_client final : public net::sasl_client_exchange {
 public:
  plain_client(const std::string& user, const std::string& password) : token_(std::string(1, '\0') + user) {
    token_ += '\0';
    token_ += password;
  }
  std::string first_token() override { return std::exchange(token_, {}); }
  // PLAIN's server answers with an empty token on success; nothing more is sent.
  result<std::optional<std::string>> respond(std::string_view /*server_token*/) override { return std::nullopt; }

 private:
  std::string token_;
};

class scram_client_exchange final : public net::sasl_client_exchange {
 public:
  scram_client_exchange(scram_mechanism m, std::string user, std::string password)
      : client_(m, std::move(user), std::move(password)) {}
  std::string first_token() override { return client_.first_message(); }
  result<std::optional<std::string>> respond(std::string_view server_token) override {
    if (!sent_final_) {
      sent_final_ = true;
      FERRY_TRY(auto final_message, client_.final_message(server_token));
      return std::optional(std::move(final_message));
    }
    FERRY_TRY(client_.verify_server_final(server_token));
    return std::optional<std::string>();
  }

 private:
  scram_client client_;
  bool sent_final_ = false;
};

}  // namespace

result<std::function<std::unique_ptr<net::sasl_client_exchange>()>> make_sasl_client_factory(
    const std::string& mechanism, std::string user, std::string password) {
  using factory = std::function<std::unique_ptr<net::sasl_client_exchange>()>;
  if (mechanism == "PLAIN")
    return factory([user = std::move(user), password = std::move(password)] {
      return std::make_unique<plain_client>(user, password);
    });
  const auto scram = scram_mechanism_named(mechanism);
  if (!scram) return make_error_code(errc::malformed_message);
  return factory([m = *scram, user = std::move(user), password = std::move(password)] {
    return std::make_unique<scram_client_exchange>(m, user, password);
  });
}

}  // namespace ferry::security
