#include <map>

#include "server/authorization.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

using user_result = p::describe_user_scram_credentials_response::user_result;

void add_credentials(user_result& out, const std::vector<security::credential_info>& infos) {
  for (const auto& info : infos) {
    auto& c = out.credential_infos.emplace_back();
    c.mechanism = static_cast<std::int8_t>(info.mechanism);
    c.iterations = info.iterations;
  }
}

}  // namespace

// DescribeUserScramCredentials lists the users' SCRAM credentials as this broker's logins see them: only each
// one's mechanism and iterations. No users (null or empty) lists every user that has one, sorted; a named user
// without any, or with an empty name, gets RESOURCE_NOT_FOUND, and one named twice DUPLICATE_RESOURCE (Kafka's
// rules, ZkAdminManager.describeUserScramCredentials).
awaitable<p::describe_user_scram_credentials_response> handle_describe_user_scram_credentials(
    request_context& ctx, p::describe_user_scram_credentials_request& request) {
  p::describe_user_scram_credentials_response response;
  if (!authorize_cluster(ctx, authz::operation::describe)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  const auto& store = *ctx.broker.credentials;
  if (!request.users || request.users->empty()) {
    for (const auto& [user, infos] : store.list()) {
      auto& out = response.results.emplace_back();
      out.user = user;
      add_credentials(out, infos);
    }
    co_return response;
  }
  std::map<std::string, int, std::less<>> times_named;
  for (const auto& u : *request.users) ++times_named[u.name];
  for (const auto& u : *request.users) {
    auto& times = times_named.at(u.name);
    if (times == 0) continue;  // a duplicate, answered once already
    auto& out = response.results.emplace_back();
    out.user = u.name;
    if (u.name.empty()) {
      out.error_code = ctx.error(p::error_code::resource_not_found);
      out.error_message = "Cannot describe SCRAM credentials for empty username";
    } else if (times > 1) {
      out.error_code = ctx.error(p::error_code::duplicate_resource);
      out.error_message = "Cannot describe SCRAM credentials for the same user twice in a single request: " + u.name;
    } else if (const auto infos = store.describe(u.name); infos.empty()) {
      out.error_code = ctx.error(p::error_code::resource_not_found);
      out.error_message = "Attempt to describe a user credential that does not exist: " + u.name;
    } else {
      add_credentials(out, infos);
    }
    times = 0;
  }
  co_return response;
}

}  // namespace ferry::server::handlers
