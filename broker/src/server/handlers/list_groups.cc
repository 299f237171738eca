#include <algorithm>
#include <cctype>

#include "server/authorization.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

bool matches(const std::vector<std::string>& filter, std::string_view value) {
  return filter.empty() ||
         std::ranges::any_of(filter, [&](const std::string& wanted) { return equals_ignoring_case(wanted, value); });
}

}  // namespace

// The groups this broker coordinates, filtered by state (v4+) and type (v5+); the admin client asks every
// broker. COORDINATOR_LOAD_IN_PROGRESS, with what is loaded so far, while a partition is still loading. Describe
// on the cluster lists every group; without it, only the groups the client may Describe (never an error).
awaitable<p::list_groups_response> handle_list_groups(request_context& ctx, p::list_groups_request& request) {
  p::list_groups_response response;
  const bool every_group = may(ctx, authz::operation::describe, authz::resource_type::cluster, authz::cluster_name);
  const auto listing = ctx.broker.groups.list();
  if (listing.loading) response.error_code = ctx.error(p::error_code::coordinator_load_in_progress);
  for (const auto& g : listing.groups) {
    const auto state = group::state_name(g.state);
    const auto type = group::type_name(g.type);
    if (!matches(request.states_filter, state) || !matches(request.types_filter, type)) continue;
    if (!every_group && !may(ctx, authz::operation::describe, authz::resource_type::group, g.group_id)) continue;
    response.groups.push_back({g.group_id, g.protocol_type, std::string(state), std::string(type)});
  }
  co_return response;
}

}  // namespace ferry::server::handlers
