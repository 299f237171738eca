#include "kafka/own_credential.h"

#include "base/log.h"
#include "coord/layout.h"
#include "kafka/errc.h"
#include "security/scram_credential.h"

namespace ferry::kafka {

result<void> ensure_own_credential(coord::config_store& configs, const client_settings& settings) {
  if (!settings.uses_sasl()) return success();
  std::string password;
  if (auto read = read_password(settings, password); !read) {
    FERRY_LOG(error, "kafka") << read.error();
    return errc::unusable_settings;
  }
  // PLAIN logins are checked against the SCRAM-SHA-512 credential, as the brokers' own.
  const auto mechanism =
      security::scram_mechanism_named(settings.sasl_mechanism).value_or(security::scram_mechanism::sha512);
  const auto name = std::string(security::name_of(mechanism));
  const auto user = coord::layout::sanitize(settings.sasl_username);
  FERRY_TRY(auto config, configs.read("users", user));
  const auto found = security::find_own_credential(mechanism, config, password);
  if (found == security::own_credential::matches) return success();
  config[name] = security::new_credential_text(mechanism, password);
  FERRY_TRY(configs.write("users", user, config));
  FERRY_LOG(info, "kafka") << (found == security::own_credential::missing ? "created" : "replaced") << " the " << name
                           << " credential of the operator's user " << settings.sasl_username;
  return success();
}

result<void> own_credential_keeper::ensure() {
  if (!settings_.uses_sasl()) return success();
  std::string password;
  if (auto read = read_password(settings_, password); !read) {
    FERRY_LOG_LIMITED(error, "kafka", 60'000) << read.error();
    return errc::unusable_settings;
  }
  const std::lock_guard lock(mutex_);
  if (password == stored_) return success();
  FERRY_TRY(ensure_own_credential(configs_, settings_));
  stored_ = std::move(password);
  return success();
}

}  // namespace ferry::kafka
