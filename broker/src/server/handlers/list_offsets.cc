#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"
#include "server/handlers/leader_hint.h"

namespace ferry::server::handlers {
namespace {

using partition_response = p::list_offsets_response::list_offsets_topic_response::list_offsets_partition_response;

constexpr std::int64_t latest = -1;
constexpr std::int64_t earliest = -2;
constexpr std::int64_t max_timestamp = -3;

constexpr std::int8_t read_committed = 1;

// `visible`: the end of what the consumer may read, the high watermark or (read_committed) the last stable offset.
void answer(request_context& ctx, replication::partition& partition, std::int64_t timestamp, offset visible,
            partition_response& out) {
  out.leader_epoch = partition.epoch();
  switch (timestamp) {
    case latest:
      out.offset = visible;
      return;
    case earliest:
      out.offset = partition.log_start_offset();
      return;
    case max_timestamp:
      if (const auto found = partition.log().max_timestamp()) {
        out.offset = found->found;
        out.timestamp = found->timestamp;
      }
      return;
    default:
      break;
  }
  const auto found = partition.log().offset_for_timestamp(timestamp);
  if (!found) {
    out.error_code = ctx.error(to_kafka_error(found.error()));
    return;
  }
  if (found.value() && found.value()->found < visible) {
    out.offset = found.value()->found;
    out.timestamp = found.value()->timestamp;
  }
}

}  // namespace

// Earliest (-2), latest (-1), max timestamp (-3, v7+) and by timestamp, the last through each segment's
// time index. v0 answers in its own shape: a list of offsets. Each topic needs Describe.
awaitable<p::list_offsets_response> handle_list_offsets(request_context& ctx, p::list_offsets_request& request) {
  p::list_offsets_response response;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.name = topic.name;
    const bool allowed = authorize(ctx, authz::operation::describe, authz::resource_type::topic, topic.name);
    for (const auto& wanted : topic.partitions) {
      auto& out = topic_out.partitions.emplace_back();
      out.partition_index = wanted.partition_index;
      if (!allowed) {
        out.error_code = ctx.error(p::error_code::topic_authorization_failed);
        continue;
      }
      const auto part = ctx.broker.partitions.leader_for({topic.name, wanted.partition_index});
      if (!part) {
        out.error_code = ctx.error(not_led_here(*ctx.broker.cluster.view(), {topic.name, wanted.partition_index}));
        continue;
      }
      auto& partition = *part.value();
      if (const auto fenced = check_epoch(partition, wanted.current_leader_epoch)) {
        out.error_code = ctx.error(*fenced);
        continue;
      }
      const offset visible =
          request.isolation_level == read_committed ? partition.last_stable_offset() : partition.high_watermark();
      answer(ctx, partition, wanted.timestamp, visible, out);
      if (ctx.version() == 0 && out.error_code == 0 && out.offset.value() >= 0)
        out.old_style_offsets.push_back(out.offset.value());
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
