#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// A group this coordinator does not know is reported as Dead with no error, as Kafka does before v6; so is a
// group of the consumer protocol, which is not a classic group (ConsumerGroupDescribe describes it).
awaitable<p::describe_groups_response> handle_describe_groups(request_context& ctx,
                                                              p::describe_groups_request& request) {
  p::describe_groups_response response;
  for (const auto& id : request.groups) {
    auto& out = response.groups.emplace_back();
    out.group_id = id;
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
