#include <chrono>
#include <map>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// ElectLeaders (kafka-leader-election.sh), answered by the controller (the admin client sends it there); the
// controller's worker decides and writes every election before this answers.
awaitable<p::elect_leaders_response> handle_elect_leaders(request_context& ctx, p::elect_leaders_request& request) {
  p::elect_leaders_response response;
  if (request.election_type != static_cast<std::int8_t>(coord::election_type::preferred) &&
      request.election_type != static_cast<std::int8_t>(coord::election_type::unclean)) {
    response.error_code = ctx.error(p::error_code::invalid_request);
    co_return response;
  }
  const auto type = static_cast<coord::election_type>(request.election_type);
  // Alter on the cluster, or every partition asked for is refused (Kafka's rule).
  if (!authorize_cluster(ctx, authz::operation::alter)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    if (request.topic_partitions)
      for (const auto& topic : *request.topic_partitions) {
        auto& out = response.replica_election_results.emplace_back();
        out.topic = topic.topic;
        for (const auto index : topic.partitions)
          out.partition_result.push_back({.partition_id = partition_id{index},
                                          .error_code = ctx.error(p::error_code::cluster_authorization_failed)});
      }
    co_return response;
  }
  std::optional<std::vector<topic_partition>> partitions;
  if (request.topic_partitions) {
    partitions.emplace();
    for (const auto& topic : *request.topic_partitions)
      for (const auto p : topic.partitions) partitions->push_back({topic.topic, partition_id{p}});
  }
  const auto timeout = std::chrono::milliseconds(std::max(0, request.timeout_ms));
  auto elected = co_await run_on_zookeeper(ctx.broker, [&ctx, &type, &partitions, &timeout] {
    return ctx.broker.writes.elect_leaders(type, partitions, timeout);
  });

  std::vector<coord::election_result> results;
  if (elected) {
    results = std::move(elected).value();
  } else {
    response.error_code = ctx.error(to_kafka_error(elected.error()));
    // Version 0 has no top-level error: each partition asked for carries it.
    if (partitions)
      for (auto& tp : *partitions) results.push_back({std::move(tp), elected.error()});
  }
  std::map<std::string, std::size_t> topic_index;
  for (auto& r : results) {
    auto [it, fresh] = topic_index.try_emplace(r.partition.topic, response.replica_election_results.size());
    if (fresh) response.replica_election_results.emplace_back().topic = r.partition.topic;
    auto& out = response.replica_election_results[it->second].partition_result.emplace_back();
    out.partition_id = r.partition.partition;
    if (!r.error) continue;
    const auto code = to_kafka_error(r.error);
    // A partition already led by the replica asked for is the usual answer to "all partitions", not a failure.
    out.error_code = code == p::error_code::election_not_needed ? p::code(code) : ctx.error(code);
    out.error_message = r.error.message();
  }
  co_return response;
}

}  // namespace ferry::server::handlers
