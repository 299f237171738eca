#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// DescribeTransactions: the transactional ids this broker coordinates, as kafka-transactions.sh describe shows
// them.
awaitable<p::describe_transactions_response> handle_describe_transactions(request_context& ctx,
                                                                          p::describe_transactions_request& request) {
  p::describe_transactions_response response;
  for (const auto& id : request.transactional_ids) {
    auto& out = response.transaction_states.emplace_back();
    out.transactional_id = id;
    out.producer_id = no_producer_id;
    out.producer_epoch = producer_epoch{-1};
    out.transaction_start_time_ms = -1;
    if (!authorize(ctx, authz::operation::describe, authz::resource_type::transactional_id, id)) {
      out.error_code = ctx.error(p::error_code::transactional_id_authorization_failed);
      continue;
    }
    const auto described = ctx.broker.transactions.describe(id);
    if (!described) {
      out.error_code = ctx.error(to_kafka_error(described.error()));
      continue;
    }
    const auto& d = described.value();
    out.transaction_state = std::string(txn::state_name(d.state));
    out.transaction_timeout_ms = d.timeout_ms;
    out.transaction_start_time_ms = d.start_ms;
    out.producer_id = d.producer.id;
    out.producer_epoch = d.producer.epoch;
    for (const auto& tp : d.partitions) {
      if (out.topics.empty() || out.topics.back().topic != tp.topic) out.topics.emplace_back().topic = tp.topic;
      out.topics.back().partitions.push_back(tp.partition.value());
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
