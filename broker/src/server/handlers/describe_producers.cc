#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// kafka-transactions.sh describe-producers and find-hanging: the idempotent and transactional producers a
// partition's replica knows, each with its epoch, last sequence and timestamp, the coordinator epoch of its last
// transaction marker, and where its open transaction started (-1: none). Followers answer too, as Kafka's do:
// find-hanging asks every broker about every partition it hosts.
awaitable<p::describe_producers_response> handle_describe_producers(request_context& ctx,
                                                                    p::describe_producers_request& request) {
  p::describe_producers_response response;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.topics.emplace_back();
    topic_out.name = topic.name;
    const bool allowed = authorize(ctx, authz::operation::read, authz::resource_type::topic, topic.name);
    for (const std::int32_t index : topic.partition_indexes) {
      auto& out = topic_out.partitions.emplace_back();
      out.partition_index = index;
      if (!allowed) {
        out.error_code = ctx.error(p::error_code::topic_authorization_failed);
        continue;
      }
      const auto part = ctx.broker.partitions.replica_for({topic.name, partition_id{index}});
      if (!part) {
        out.error_code = ctx.error(to_kafka_error(part.error()));
        continue;
      }
      for (const auto& [id, entry] : part.value()->log().producers()) {
        auto& producer = out.active_producers.emplace_back();
        producer.producer_id = id;
        producer.producer_epoch = entry.epoch.value();
        if (!entry.batches.empty()) {
          producer.last_sequence = entry.batches.back().last_sequence;
          producer.last_timestamp = entry.batches.back().max_timestamp;
        }
        producer.coordinator_epoch = entry.coordinator_epoch;
        producer.current_txn_start_offset = entry.ongoing_txn.value_or(no_offset).value();
      }
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
