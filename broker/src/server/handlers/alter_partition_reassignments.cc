#include "server/authorization.h"
#include "server/handlers/handlers.h"
#include "server/reassignments.h"

namespace ferry::server::handlers {

// kafka-reassign-partitions.sh --execute / --cancel: starts (or cancels) each partition's move by rewriting its
// topic's assignment in ZooKeeper; the controller completes the moves once the new replicas are in sync.
awaitable<p::alter_partition_reassignments_response> handle_alter_partition_reassignments(
    request_context& ctx, p::alter_partition_reassignments_request& request) {
  p::alter_partition_reassignments_response response;
  if (!authorize_cluster(ctx, authz::operation::alter)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  for (const auto& topic : request.topics) {
    std::vector<partition_move> moves;
    for (const auto& partition : topic.partitions) {
      auto& move = moves.emplace_back();
      move.partition = partition.partition_index;
      if (partition.replicas) {
        move.target.emplace();
        for (const auto id : *partition.replicas) move.target->push_back(broker_id{id});
      }
    }
    const auto& name = topic.name;
    const auto results = co_await run_on_zookeeper(
        ctx.broker, [&ctx, &name, &moves] { return reassign_partitions(ctx.broker, name, moves); });
    auto& out = response.responses.emplace_back();
    out.name = topic.name;
    for (std::size_t i = 0; i < moves.size(); ++i) {
      auto& partition = out.partitions.emplace_back();
      partition.partition_index = moves[i].partition;
      if (results[i].error == p::error_code::none) continue;
      partition.error_code = ctx.error(results[i].error);
      partition.error_message = results[i].message;
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
