#include <chrono>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"
#include "server/handlers/leader_hint.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// How often an answer that waits for the followers' log starts looks again.
constexpr std::chrono::milliseconds recheck{20};

}  // namespace

// kafka-delete-records.sh, AdminClient.deleteRecords, Kafka Streams' purge of its repartition topics: each
// partition's log starts at the offset given (-1: the high watermark) from now on. As in Kafka, the answer waits
// (up to timeout_ms) until every in-sync replica's log starts there too (the low watermark it answers), and an
// offset past the high watermark is OFFSET_OUT_OF_RANGE.
awaitable<p::delete_records_response> handle_delete_records(request_context& ctx, p::delete_records_request& request) {
  p::delete_records_response response;
  struct pending {
    p::delete_records_response::delete_records_topic_result::delete_records_partition_result* out;
    std::shared_ptr<replication::partition> partition;
    offset wanted;
  };
  std::vector<pending> waiting;
  const auto view = ctx.broker.cluster.view();
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.name = topic.name;
    topic_out.partitions.reserve(topic.partitions.size());
    const bool allowed = authorize(ctx, authz::operation::remove, authz::resource_type::topic, topic.name);
    for (const auto& wanted : topic.partitions) {
      auto& out = topic_out.partitions.emplace_back();
      out.partition_index = wanted.partition_index;
      out.low_watermark = no_offset;
      if (!allowed) {
        out.error_code = ctx.error(p::error_code::topic_authorization_failed);
        continue;
      }
      const topic_partition tp{topic.name, wanted.partition_index};
      const auto part = ctx.broker.partitions.leader_for(tp);
      if (!part) {
        out.error_code = ctx.error(not_led_here(*view, tp));
        continue;
      }
      const auto started = part.value()->delete_records(wanted.offset);
      if (!started) {
        out.error_code = ctx.error(to_kafka_error(started.error()));
        continue;
      }
      waiting.push_back({&out, part.value(), started.value()});
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, request.timeout_ms));
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    bool all_there = true;
    for (auto& w : waiting) {
      if (w.out->error_code != 0 || w.out->low_watermark >= w.wanted) continue;
      if (!w.partition->is_leader()) {
        w.out->error_code = ctx.error(p::error_code::not_leader_or_follower);
        continue;
      }
      const offset low = w.partition->low_watermark();
      if (low >= w.wanted) {
        w.out->low_watermark = low;
      } else {
        all_there = false;
      }
    }
    if (all_there) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (auto& w : waiting)
        if (w.out->error_code == 0 && w.out->low_watermark < w.wanted)
          w.out->error_code = ctx.error(p::error_code::request_timed_out);
      break;
    }
    timer.expires_after(recheck);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return response;
}

}  // namespace ferry::server::handlers
