#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// A group this coordinator does not know is reported as Dead with no error, as Kafka does before v6; so is a
// group of the consumer protocol, which is not a classic group (ConsumerGroupDescribe describes it). Each group
// needs Describe; KIP-430's authorized operations are filled in when asked for (v3+).
awaitable<p::describe_groups_response> handle_describe_groups(request_context& ctx,
                                                              p::describe_groups_request& request) {
  p::describe_groups_response response;
  for (const auto& id : request.groups) {
    auto& out = response.groups.emplace_back();
    out.group_id = id;
    if (!authorize(ctx, authz::operation::describe, authz::resource_type::group, id)) {
      out.error_code = ctx.error(p::error_code::group_authorization_failed);
      continue;
    }
    if (ctx.version() >= 3 && request.include_authorized_operations)
      out.authorized_operations = authorized_operations(ctx, authz::resource_type::group, id);
    const auto described = ctx.broker.groups.describe(id);
    if (!described) {
      out.error_code = ctx.error(to_kafka_error(described.error()));
      out.group_state = std::string(group::state_name(group::group_state::dead));
      continue;
    }
    const auto& found = described.value();
    if (found.type != group::group_type::classic) {
      out.group_state = std::string(group::state_name(group::group_state::dead));
      continue;
    }
    out.group_state = std::string(group::state_name(found.state));
    out.protocol_type = found.protocol_type;
    out.protocol_data = found.protocol;
    for (const auto& m : found.members) {
      auto& member = out.members.emplace_back();
      member.member_id = m.member_id;
      member.group_instance_id = m.group_instance_id;
      member.client_id = m.client_id;
      member.client_host = m.client_host;
      member.member_metadata = m.metadata;
      member.member_assignment = m.assignment;
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
