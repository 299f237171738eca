#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// Where a leader epoch ended in the leader's log (KIP-101): the largest epoch at or below the requested one
// and the start of the next, or the log end for the current epoch. Followers truncate to it; consumers
// compare it with their position after a leader change and detect truncation (KIP-320). Only the leader
// answers, fenced by current_leader_epoch (v2+) like Fetch and ListOffsets. An epoch the log cannot place
// gets no error and -1 for both, as in Kafka: the asker falls back to its high watermark. A follower (replica id
// 0 or more, v3+) needs ClusterAction on the cluster; a consumer, Describe on each topic.
awaitable<p::offset_for_leader_epoch_response> handle_offset_for_leader_epoch(
    request_context& ctx, p::offset_for_leader_epoch_request& request) {
  p::offset_for_leader_epoch_response response;
  const bool from_follower = request.replica_id.value() >= 0;
  const bool follower_refused = from_follower && !authorize_broker_request(ctx);
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.topic = topic.topic;
    const auto refusal =
        follower_refused ? std::optional(p::error_code::cluster_authorization_failed)
        : !from_follower && !authorize(ctx, authz::operation::describe, authz::resource_type::topic, topic.topic)
            ? std::optional(p::error_code::topic_authorization_failed)
            : std::nullopt;
    for (const auto& wanted : topic.partitions) {
      auto& out = topic_out.partitions.emplace_back();
      out.partition = wanted.partition;
      if (refusal) {
        out.error_code = ctx.error(*refusal);
        continue;
      }
      const auto part = ctx.broker.partitions.leader_for({topic.topic, wanted.partition});
      if (!part) {
        out.error_code = ctx.error(to_kafka_error(part.error()));
        continue;
      }
      auto& partition = *part.value();
      if (const auto fenced = check_epoch(partition, wanted.current_leader_epoch)) {
        out.error_code = ctx.error(*fenced);
        continue;
      }
      const auto found = partition.log().end_offset_for_epoch(wanted.leader_epoch);
      out.leader_epoch = found.epoch;
      out.end_offset = found.end;
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
