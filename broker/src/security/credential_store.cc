#include "security/credential_store.h"

#include <mutex>

#include "base/log.h"

namespace ferry::security {

credential_store::credentials credential_store::parse(std::string_view user, const config_map& config) {
  credentials parsed;
  for (const auto m : {scram_mechanism::sha256, scram_mechanism::sha512}) {
    const auto entry = config.find(std::string(name_of(m)));
    if (entry == config.end()) continue;
    auto credential = parse_credential(m, entry->second);
    if (!credential) {
      // The value holds the user's keys: only the reason is logged.
      FERRY_LOG_LIMITED(warn, "security", 10'000)
          << "ignoring the " << name_of(m) << " credential of user '" << user << "': " << credential.error().message();
      continue;
    }
    parsed.emplace(m, std::move(credential).value());
  }
  return parsed;
}

std::vector<credential_info> credential_store::infos(const credentials& c) {
  std::vector<credential_info> out;
  out.reserve(c.size());
  for (const auto& [m, credential] : c) out.push_back({m, credential.iterations});
  return out;
}

void credential_store::replace_all(const users_config& users) {
  std::map<std::string, credentials, std::less<>> parsed;
  for (const auto& [user, config] : users) {
    auto c = parse(user, config);
    if (!c.empty()) parsed.emplace(user, std::move(c));
  }
  std::unique_lock lock(mutex_);
  users_.swap(parsed);
  // The old credentials are freed after the lock, by `parsed`.
}

void credential_store::update(std::string_view user, const config_map& config) {
  auto c = parse(user, config);
  if (c.empty()) {
    remove(user);
    return;
  }
  std::unique_lock lock(mutex_);
  const auto it = users_.find(user);
  if (it == users_.end())
    users_.emplace(std::string(user), std::move(c));
  else
    it->second.swap(c);
}

void credential_store::remove(std::string_view user) {
  std::unique_lock lock(mutex_);
  if (const auto it = users_.find(user); it != users_.end()) users_.erase(it);
}

std::optional<scram_credential> credential_store::find(std::string_view user, scram_mechanism m) const {
  std::shared_lock lock(mutex_);
  const auto it = users_.find(user);
  if (it == users_.end()) return std::nullopt;
  const auto credential = it->second.find(m);
  if (credential == it->second.end()) return std::nullopt;
  return credential->second;
}

std::vector<credential_info> credential_store::describe(std::string_view user) const {
  std::shared_lock lock(mutex_);
  const auto it = users_.find(user);
  return it == users_.end() ? std::vector<credential_info>{} : infos(it->second);
}

std::map<std::string, std::vector<credential_info>> credential_store::list() const {
  std::map<std::string, std::vector<credential_info>> out;
  std::shared_lock lock(mutex_);
  for (const auto& [user, c] : users_) out.emplace(user, infos(c));
  return out;
}

}  // namespace ferry::security
