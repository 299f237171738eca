#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "security/sasl_exchange.h"
#include "security/scram_credential.h"

namespace ferry::security {

// One stored credential as DescribeUserScramCredentials shows it: never the keys.
struct credential_info {
  scram_mechanism mechanism = scram_mechanism::sha256;
  std::int32_t iterations = 0;

  bool operator==(const credential_info&) const = default;
};

// The users' SCRAM credentials as logins look them up, built from the users' config entities in ZooKeeper
// (/config/users/<user>: "SCRAM-SHA-256" and "SCRAM-SHA-512" beside quota keys, which are ignored). A
// credential that does not parse is logged (without its value) and left out: that user cannot log in with it.
//
// Thread-safe. Lookups run on the network threads at every login and take a shared lock only; updates build
// what they replace before taking the exclusive one.
class credential_store final : public credential_source {
 public:
  // A user's config entity (coord::layout::config_map), and every user's by name.
  using config_map = std::map<std::string, std::string>;
  using users_config = std::map<std::string, config_map, std::less<>>;

  // Replaces every user's credentials.
  void replace_all(const users_config& users);
  // Replaces one user's credentials (none left when `config` has no SCRAM entry).
  void update(std::string_view user, const config_map& config);
  void remove(std::string_view user);

  [[nodiscard]] std::optional<scram_credential> find(std::string_view user, scram_mechanism m) const override;
  // The user's credentials, by mechanism (empty for a user without any).
  [[nodiscard]] std::vector<credential_info> describe(std::string_view user) const;
  // Every user that has a credential, sorted by name, with theirs.
  [[nodiscard]] std::map<std::string, std::vector<credential_info>> list() const;

 private:
  using credentials = std::map<scram_mechanism, scram_credential>;
  static credentials parse(std::string_view user, const config_map& config);
  static std::vector<credential_info> infos(const credentials& c);

  mutable std::shared_mutex mutex_;
  std::map<std::string, credentials, std::less<>> users_;  // users without credentials are not kept
};

}  // namespace ferry::security
