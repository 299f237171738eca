#include "group/errc.h"
#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

// An assignment with the topic names the cluster has now; topics gone since are left out, as Kafka does.
template <typename Out>
void fill(Out& out, const group::topic_id_partitions& assignment, const coord::cluster_view& view) {
  for (const auto& [topic, partitions] : assignment) {
    const auto* name = view.find_topic_name(coord::uuid{topic});
    if (name == nullptr) continue;
    auto& entry = out.topic_partitions.emplace_back();
    entry.topic_id = topic;
    entry.topic_name = *name;
    entry.partitions.assign(partitions.begin(), partitions.end());
  }
}

}  // namespace

// Groups of the consumer protocol with their members' current and target assignments (what
// kafka-consumer-groups.sh --describe and the admin client's describeConsumerGroups show). A group that is
// missing, or classic, is GROUP_ID_NOT_FOUND: the admin client then asks DescribeGroups. Each group needs
// Describe; KIP-430's authorized operations are filled in when asked for.
awaitable<p::consumer_group_describe_response> handle_consumer_group_describe(
    request_context& ctx, p::consumer_group_describe_request& request) {
  p::consumer_group_describe_response response;
  const auto view = ctx.broker.cluster.view();
  for (const auto& id : request.group_ids) {
    auto& out = response.groups.emplace_back();
    out.group_id = id;
    if (!ctx.broker.config.group_consumer_protocol) {
      out.error_code = ctx.error(p::error_code::unsupported_version);
      continue;
    }
    if (!authorize(ctx, authz::operation::describe, authz::resource_type::group, id)) {
      out.error_code = ctx.error(p::error_code::group_authorization_failed);
      continue;
    }
    if (request.include_authorized_operations)
      out.authorized_operations = authorized_operations(ctx, authz::resource_type::group, id);
    const auto described = ctx.broker.groups.describe_consumer_group(id);
    if (!described) {
      out.error_code = ctx.error(to_kafka_error(described.error()));
      if (described.error() == group::errc::group_id_not_found) out.error_message = "Group " + id + " not found.";
      continue;
    }
    const auto& d = described.value();
    out.group_state = std::string(group::state_name(d.state));
    out.group_epoch = d.group_epoch;
    out.assignment_epoch = d.assignment_epoch;
    out.assignor_name = d.assignor;
    for (const auto& m : d.members) {
      auto& member = out.members.emplace_back();
      member.member_id = m.member_id;
      member.instance_id = m.instance_id;
      member.rack_id = m.rack_id;
      member.member_epoch = m.member_epoch;
      member.client_id = m.client_id;
      member.client_host = m.client_host;
      member.subscribed_topic_names = m.subscribed_topic_names;
      member.subscribed_topic_regex = m.subscribed_topic_regex;
      fill(member.assignment, m.assignment, *view);
      fill(member.target_assignment, m.target_assignment, *view);
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
