#include "server/authorization.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

std::vector<std::int32_t> to_wire(const std::vector<broker_id>& ids) {
  std::vector<std::int32_t> out;
  out.reserve(ids.size());
  for (const auto id : ids) out.push_back(id.value());
  return out;
}

}  // namespace

// kafka-reassign-partitions.sh --verify / --list: the partitions being reassigned, as the topic znodes say
// (every partition of every topic when no topics are named; partitions not being moved are left out).
awaitable<p::list_partition_reassignments_response> handle_list_partition_reassignments(
    request_context& ctx, p::list_partition_reassignments_request& request) {
  p::list_partition_reassignments_response response;
  if (!authorize_cluster(ctx, authz::operation::describe)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  const auto view = ctx.broker.cluster.view();
  const auto add = [&](const std::string& name, const coord::topic_info& topic, const std::vector<std::int32_t>* only) {
    p::list_partition_reassignments_response::ongoing_topic_reassignment out;
    out.name = name;
    for (const auto& [id, info] : topic.partitions) {
      if (!info.reassigning()) continue;
      if (only != nullptr && std::find(only->begin(), only->end(), id.value()) == only->end()) continue;
      auto& partition = out.partitions.emplace_back();
      partition.partition_index = id;
      partition.replicas = to_wire(info.replicas);
      partition.adding_replicas = to_wire(info.adding);
      partition.removing_replicas = to_wire(info.removing);
    }
    if (!out.partitions.empty()) response.topics.push_back(std::move(out));
  };
  if (request.topics) {
    for (const auto& wanted : *request.topics)
      if (const auto* topic = view->find_topic(wanted.name)) add(wanted.name, *topic, &wanted.partition_indexes);
  } else {
    for (const auto& [name, topic] : view->topics) add(name, topic, nullptr);
  }
  co_return response;
}

}  // namespace ferry::server::handlers
