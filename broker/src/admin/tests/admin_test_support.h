#pragma once

// What the admin API's access tests share: users with SCRAM credentials, and a password checker that runs the
// PBKDF2 inline.

#include <map>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/awaitable.hpp>

#include "security/sasl_exchange.h"
#include "security/scram_credential.h"

namespace ferry::admin::testing {

class fake_users final : public security::credential_source {
 public:
  void add(const std::string& user, security::scram_mechanism m, const std::string& password) {
    credentials_[{user, m}] = security::derive_credential(m, password, "salt-" + user, 4096);
  }
  [[nodiscard]] std::optional<security::scram_credential> find(std::string_view user,
                                                               security::scram_mechanism m) const override {
    const auto it = credentials_.find({std::string(user), m});
    if (it == credentials_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::pair<std::string, security::scram_mechanism>, security::scram_credential> credentials_;
};

class inline_checker final : public security::password_checker {
 public:
  boost::asio::awaitable<result<bool>> check(security::scram_mechanism m, security::scram_credential credential,
                                             std::string password) override {
    ++checks;
    co_return security::password_matches(m, credential, password);
  }
  int checks = 0;
};

}  // namespace ferry::admin::testing
