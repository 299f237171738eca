#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;

// Commits go to the group's __consumer_offsets partition and are answered once replicated there
// (group_coordinator::commit). A partition that does not exist gets UNKNOWN_TOPIC_OR_PARTITION, as in Kafka;
// the group's checks (membership, generation) answer for all of them. Needs Read on the group (or every partition
// is GROUP_AUTHORIZATION_FAILED) and on each topic.
awaitable<p::offset_commit_response> handle_offset_commit(request_context& ctx, p::offset_commit_request& request) {
  const auto view = ctx.broker.cluster.view();
  const auto now = ctx.broker.clock.now_ms();
  group::group_coordinator::commit_request commit;
  commit.member_id = request.member_id;
  commit.group_instance_id = request.group_instance_id;
  commit.generation = request.generation_id_or_member_epoch;
  // Where each requested partition's answer comes from: the commit's results, or an error of its own.
  struct slot {
    p::error_code error = p::error_code::none;
    std::size_t commit_index = 0;
  };
  std::vector<std::vector<slot>> slots;
  const bool group_allowed = authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id);
  for (const auto& topic : request.topics) {
    auto& topic_slots = slots.emplace_back();
    const bool topic_allowed =
        group_allowed && authorize(ctx, authz::operation::read, authz::resource_type::topic, topic.name);
    for (const auto& part : topic.partitions) {
      const topic_partition tp{topic.name, part.partition_index};
      if (!group_allowed || !topic_allowed) {
        topic_slots.push_back(
            {group_allowed ? p::error_code::topic_authorization_failed : p::error_code::group_authorization_failed, 0});
        continue;
      }
      if (view->find_partition(tp) == nullptr) {
        topic_slots.push_back({p::error_code::unknown_topic_or_partition, 0});
        continue;
      }
      group::committed_offset value;
      value.committed = part.committed_offset;
      value.epoch = part.committed_leader_epoch;
      value.metadata = part.committed_metadata.value_or("");
      value.commit_timestamp_ms = part.commit_timestamp >= 0 ? part.commit_timestamp : now;
      // OffsetCommit v2-4 may ask for its own retention.
      if (request.retention_time_ms >= 0) value.expire_timestamp_ms = now + request.retention_time_ms;
      topic_slots.push_back({p::error_code::none, commit.offsets.size()});
      commit.offsets.push_back({tp, std::move(value)});
    }
  }
  std::vector<std::error_code> results;
  if (!commit.offsets.empty()) {
    auto& groups = ctx.broker.groups;
    auto reply = std::make_shared<coordinator_reply<std::vector<std::error_code>>>(ctx.connection.executor);
    groups.commit(request.group_id, std::move(commit), now, reply->callback());
    while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
    results = std::move(reply->value());
  }
  p::offset_commit_response response;
  for (std::size_t t = 0; t < request.topics.size(); ++t) {
    auto& topic = response.topics.emplace_back();
    topic.name = request.topics[t].name;
    for (std::size_t i = 0; i < request.topics[t].partitions.size(); ++i) {
      const auto& s = slots[t][i];
      const auto code = s.error != p::error_code::none ? s.error : to_kafka_error(results.at(s.commit_index));
      topic.partitions.push_back({request.topics[t].partitions[i].partition_index, ctx.error(code)});
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
