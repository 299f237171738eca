#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "security/scram_credential.h"
#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"
#include "server/view_wait.h"

namespace ferry::server::handlers {
namespace {

// How long the answer waits for this broker's logins to see the change (read-your-writes on this broker);
// past it the change is still made, and reaches the store with the next view.
constexpr auto store_wait = std::chrono::seconds(5);

using request_type = p::alter_user_scram_credentials_request;
using problem = std::pair<p::error_code, std::string>;

// What one request asks of one user: the credentials it sets (built from the salted passwords) and the ones
// it deletes, or why none of it is done.
struct user_change {
  std::map<security::scram_mechanism, security::scram_credential> upserted;
  std::set<security::scram_mechanism> deleted;
  std::optional<problem> refused;
};

std::optional<problem> check_name_and_mechanism(const std::string& name, std::int8_t mechanism) {
  if (name.empty()) return problem{p::error_code::unacceptable_credential, "Username must not be empty"};
  if (!security::scram_mechanism_of_type(mechanism))
    return problem{p::error_code::unsupported_sasl_mechanism, "Unknown SCRAM mechanism"};
  return std::nullopt;
}

std::optional<problem> check_upsertion(const request_type::credential_upsertion& u) {
  if (auto bad = check_name_and_mechanism(u.name, u.mechanism)) return bad;
  if (u.iterations < security::min_scram_iterations)
    return problem{p::error_code::unacceptable_credential, "Too few iterations: " + std::to_string(u.iterations)};
  if (u.iterations > security::max_scram_iterations)
    return problem{p::error_code::unacceptable_credential, "Too many iterations: " + std::to_string(u.iterations)};
  if (u.salt.empty() || u.salted_password.empty())
    return problem{p::error_code::unacceptable_credential, "Salt and salted password must not be empty"};
  return std::nullopt;
}

std::string_view as_text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Every user the request names, in the order it first names them, with what it asks of each. A refused entry
// refuses the user's whole change, as does a (user, mechanism) named twice.
std::vector<std::pair<std::string, user_change>> changes_by_user(const request_type& request) {
  std::vector<std::pair<std::string, user_change>> users;
  std::map<std::string, std::size_t, std::less<>> index;
  const auto change_of = [&](const std::string& name) -> user_change& {
    const auto [it, added] = index.emplace(name, users.size());
    if (added) users.emplace_back(name, user_change{});
    return users[it->second].second;
  };
  std::set<std::pair<std::string, std::int8_t>> named;
  const auto refuse = [](user_change& c, problem why) {
    if (!c.refused) c.refused = std::move(why);
  };
  for (const auto& d : request.deletions) {
    auto& c = change_of(d.name);
    if (auto bad = check_name_and_mechanism(d.name, d.mechanism)) {
      refuse(c, std::move(*bad));
      continue;
    }
    if (!named.emplace(d.name, d.mechanism).second)
      refuse(c, {p::error_code::duplicate_resource, "A user credential cannot be altered twice in the same request"});
    c.deleted.insert(*security::scram_mechanism_of_type(d.mechanism));
  }
  for (const auto& u : request.upsertions) {
    auto& c = change_of(u.name);
    if (auto bad = check_upsertion(u)) {
      refuse(c, std::move(*bad));
      continue;
    }
    if (!named.emplace(u.name, u.mechanism).second)
      refuse(c, {p::error_code::duplicate_resource, "A user credential cannot be altered twice in the same request"});
    if (c.refused) continue;
    const auto m = *security::scram_mechanism_of_type(u.mechanism);
    // Two HMACs: cheap enough for the network thread.
    c.upserted[m] =
        security::credential_from_salted_password(m, as_text(u.salt), as_text(u.salted_password), u.iterations);
  }
  return users;
}

// Applies one user's change to its entity in ZooKeeper, keeping its other keys (quotas). Blocking.
std::optional<problem> write_change(user_configs& users, const std::string& user, const user_change& change) {
  auto current = users.read_user_config(user);
  if (!current) return problem{to_kafka_error(current.error()), "cannot read the user's config"};
  auto config = current.value();
  for (const auto m : change.deleted) {
    if (config.erase(std::string(security::name_of(m))) == 0)
      return problem{p::error_code::resource_not_found, "Attempt to delete a user credential that does not exist"};
  }
  for (const auto& [m, credential] : change.upserted)
    config[std::string(security::name_of(m))] = security::format_credential(credential);
  if (config == current.value()) return std::nullopt;
  if (auto written = users.set_user_config(user, config); !written)
    return problem{to_kafka_error(written.error()), "cannot write the user's config"};
  return std::nullopt;
}

// Whether the store logins read has taken the change.
bool in_store(const security::credential_store& store, const std::string& user, const user_change& change) {
  for (const auto m : change.deleted)
    if (store.find(user, m)) return false;
  for (const auto& [m, credential] : change.upserted)
    if (store.find(user, m) != credential) return false;
  return true;
}

}  // namespace

// AlterUserScramCredentials sets and deletes users' SCRAM credentials in ZooKeeper (/config/users/<user>),
// whence every broker's logins take them. Kafka's rules (ZkAdminManager.alterUserScramCredentials): an empty
// name or iterations outside 4096-16384 are UNACCEPTABLE_CREDENTIAL, an unknown mechanism
// UNSUPPORTED_SASL_MECHANISM, a (user, mechanism) named twice DUPLICATE_RESOURCE, the deletion of a credential
// that does not exist RESOURCE_NOT_FOUND; each refuses that user's whole change, and the other users' go on.
// Unlike Kafka, any broker takes it, not only the controller. One result per user.
awaitable<p::alter_user_scram_credentials_response> handle_alter_user_scram_credentials(
    request_context& ctx, p::alter_user_scram_credentials_request& request) {
  p::alter_user_scram_credentials_response response;
  // Alter on the cluster, or every user's change is refused (Kafka's rule).
  if (!authorize_cluster(ctx, authz::operation::alter)) {
    for (auto& entry : changes_by_user(request))
      response.results.push_back({entry.first, ctx.error(p::error_code::cluster_authorization_failed), std::nullopt});
    co_return response;
  }
  // The store follows the cluster view (the application feeds it every new one).
  const auto& store = *ctx.broker.credentials;
  for (auto& entry : changes_by_user(request)) {
    // Named references, not structured bindings, for the lambdas to capture.
    const std::string& user = entry.first;
    user_change& change = entry.second;
    auto& out = response.results.emplace_back();
    out.user = user;
    if (!change.refused) {
      change.refused = co_await run_on_zookeeper(
          ctx.broker, [&ctx, &user, &change] { return write_change(*ctx.broker.users, user, change); });
    }
    if (change.refused) {
      out.error_code = ctx.error(change.refused->first);
      out.error_message = change.refused->second;
      continue;
    }
    // Answered once this broker's logins see the change, so the client reads its own write here.
    const bool taken = co_await wait_for_view(
        ctx.broker, [&store, &user, &change](const coord::cluster_view&) { return in_store(store, user, change); },
        store_wait);
    // Written either way: a later view brings the change.
    if (!taken)
      FERRY_LOG(warn, "server") << "SCRAM credentials written to ZooKeeper have not reached this broker's logins after "
                                << store_wait.count() << " s";
  }
  co_return response;
}

}  // namespace ferry::server::handlers
