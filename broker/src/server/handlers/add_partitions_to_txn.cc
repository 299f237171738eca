#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// KIP-588: PRODUCER_FENCED from AddPartitionsToTxn v2.
constexpr std::int16_t first_version_with_producer_fenced = 2;

struct txn_partitions {
  std::vector<topic_partition> partitions;
  std::vector<topic_partition> unknown;  // topics or partitions the cluster does not have
  std::vector<topic_partition> refused;  // of topics the producer may not Write (checked before existence)

  [[nodiscard]] bool all_usable() const { return unknown.empty() && refused.empty(); }
};

// `check_write`: a producer's request (v3 and below), whose topics each need Write.
template <typename Topics>
txn_partitions resolve(request_context& ctx, const coord::cluster_view& view, const Topics& topics, bool check_write) {
  txn_partitions out;
  for (const auto& topic : topics) {
    const auto* t = view.find_topic(topic.name);
    const bool refused =
        check_write && !authorize(ctx, authz::operation::write, authz::resource_type::topic, topic.name);
    for (const auto p : topic.partitions) {
      topic_partition tp{topic.name, partition_id{p}};
      if (refused)
        out.refused.push_back(std::move(tp));
      else if (t == nullptr || t->marked_for_deletion || !t->partitions.contains(tp.partition))
        out.unknown.push_back(std::move(tp));
      else
        out.partitions.push_back(std::move(tp));
    }
  }
  return out;
}

// One transaction's result, every partition with the same error but those of refused and unknown topics, which
// get TOPIC_AUTHORIZATION_FAILED and UNKNOWN_TOPIC_OR_PARTITION while the others get OPERATION_NOT_ATTEMPTED, as
// in Kafka.
template <typename TopicResult, typename Topics>
std::vector<TopicResult> results_for(request_context& ctx, const Topics& topics, const txn_partitions& resolved,
                                     p::error_code error) {
  std::vector<TopicResult> out;
  for (const auto& topic : topics) {
    auto& r = out.emplace_back();
    r.name = topic.name;
    for (const auto p : topic.partitions) {
      const topic_partition tp{topic.name, partition_id{p}};
      const auto in = [&tp](const std::vector<topic_partition>& list) {
        return std::find(list.begin(), list.end(), tp) != list.end();
      };
      auto code = error;
      if (!resolved.all_usable())
        code = in(resolved.refused)   ? p::error_code::topic_authorization_failed
               : in(resolved.unknown) ? p::error_code::unknown_topic_or_partition
                                      : p::error_code::operation_not_attempted;
      r.results_by_partition.push_back({.partition_index = p, .partition_error_code = ctx.error(code)});
    }
  }
  return out;
}

}  // namespace

// AddPartitionsToTxn: v0-3 from producers, one transaction; v4+ between brokers, a batch of transactions,
// each either added or only verified (KIP-890: a partition leader asking whether a batch's partition is in its
// producer's open transaction before taking it). A producer needs Write on its transactional id (or every
// partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and on each topic; a broker needs ClusterAction.
awaitable<p::add_partitions_to_txn_response> handle_add_partitions_to_txn(request_context& ctx,
                                                                          p::add_partitions_to_txn_request& request) {
  p::add_partitions_to_txn_response response;
  const auto view = ctx.broker.cluster.view();
  auto& coordinator = ctx.broker.transactions;
  const bool fenced_known = ctx.version() >= first_version_with_producer_fenced;
  // v4+ adds come from brokers, for producers of transaction version 2 (KIP-890 part 2).
  const bool by_broker = ctx.version() >= 4;
  const auto add = [&](const std::string& id, producer_id pid, producer_epoch epoch,
                       const txn_partitions& resolved) -> awaitable<p::error_code> {
    if (!resolved.all_usable()) co_return p::error_code::operation_not_attempted;  // overridden per partition
    auto reply = std::make_shared<coordinator_reply<std::error_code>>(ctx.connection.executor);
    coordinator.add_partitions(id, {pid, epoch}, resolved.partitions, by_broker, ctx.broker.clock.now_ms(),
                               reply->callback());
    while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
    co_return reply->value() ? to_kafka_txn_error(reply->value(), fenced_known) : p::error_code::none;
  };

  if (ctx.version() <= 3) {
    if (!authorize(ctx, authz::operation::write, authz::resource_type::transactional_id,
                   request.v3_and_below_transactional_id)) {
      response.results_by_topic_v3_and_below =
          results_for<p::add_partitions_to_txn_response::add_partitions_to_txn_v3_topic_result>(
              ctx, request.v3_and_below_topics, {}, p::error_code::transactional_id_authorization_failed);
      co_return response;
    }
    const auto resolved = resolve(ctx, *view, request.v3_and_below_topics, true);
    const auto error = co_await add(request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                                    request.v3_and_below_producer_epoch, resolved);
    response.results_by_topic_v3_and_below =
        results_for<p::add_partitions_to_txn_response::add_partitions_to_txn_v3_topic_result>(
            ctx, request.v3_and_below_topics, resolved, error);
    co_return response;
  }
  if (!authorize_broker_request(ctx)) {
    response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  for (const auto& txn : request.transactions) {
    const auto resolved = resolve(ctx, *view, txn.topics, false);
    auto& result = response.results_by_transaction.emplace_back();
    result.transactional_id = txn.transactional_id;
    if (!txn.verify_only) {
      const auto error = co_await add(txn.transactional_id, txn.producer_id, txn.producer_epoch, resolved);
      result.topic_results = results_for<
          p::add_partitions_to_txn_response::add_partitions_to_txn_result::add_partitions_to_txn_topic_result>(
          ctx, txn.topics, resolved, error);
      continue;
    }
    for (const auto& topic : txn.topics) {
      auto& r = result.topic_results.emplace_back();
      r.name = topic.name;
      for (const auto p : topic.partitions) {
        const auto verified = coordinator.verify_partition(txn.transactional_id, {txn.producer_id, txn.producer_epoch},
                                                           {topic.name, partition_id{p}});
        r.results_by_partition.push_back(
            {.partition_index = p,
             .partition_error_code = ctx.error(verified ? to_kafka_error(verified) : p::error_code::none)});
      }
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
