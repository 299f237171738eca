#include "server/txn_verification.h"

#include <optional>
#include <vector>

#include "base/log.h"
#include "model/record_batch.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "server/error_mapping.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {
namespace p = protocol;
namespace {

// AddPartitionsToTxn v4: the first with VerifyOnly.
constexpr std::int16_t verify_version = 4;

// What a producer is told when its coordinator refuses or cannot answer.
p::error_code for_producer(p::error_code coordinator_answer) {
  switch (coordinator_answer) {
    case p::error_code::not_coordinator:
    case p::error_code::coordinator_not_available:
    case p::error_code::coordinator_load_in_progress:
    case p::error_code::concurrent_transactions:
      return p::error_code::not_enough_replicas;
    case p::error_code::producer_fenced:
      return p::error_code::invalid_producer_epoch;
    default:
      return coordinator_answer;
  }
}

}  // namespace

boost::asio::awaitable<std::vector<p::error_code>> verify_with_coordinator(
    request_context& ctx, const std::string& id, txn::producer_identity producer,
    const std::vector<topic_partition>& partitions) {
  auto& broker = ctx.broker;
  std::vector<p::error_code> out(partitions.size(), p::error_code::not_enough_replicas);
  const auto view = broker.cluster.view();
  const auto* info = view->find_partition(
      {std::string(txn::transaction_state_topic), partition_id{broker.transactions.partition_for(id)}});
  if (info == nullptr || !info->state || !view->is_live(info->state->leader)) co_return out;
  const auto leader = info->state->leader;
  if (leader == broker_id{broker.config.broker_id}) {
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      const auto verified = broker.transactions.verify_partition(id, producer, partitions[i]);
      out[i] = for_producer(verified ? to_kafka_error(verified) : p::error_code::none);
    }
    co_return out;
  }
  p::add_partitions_to_txn_request request;
  auto& txn = request.transactions.emplace_back();
  txn.transactional_id = id;
  txn.producer_id = producer.id;
  txn.producer_epoch = producer.epoch;
  txn.verify_only = true;
  for (const auto& tp : partitions) {
    if (txn.topics.empty() || txn.topics.back().name != tp.topic) txn.topics.emplace_back().name = tp.topic;
    txn.topics.back().partitions.push_back(tp.partition.value());
  }
  const auto answer = co_await broker.peers.call<p::add_partitions_to_txn_request, p::add_partitions_to_txn_response>(
      view->brokers.at(leader), request, verify_version);
  if (!answer) {
    FERRY_LOG_LIMITED(warn, "txn", 10000) << "cannot verify transactional batches with the coordinator of " << id
                                          << ", broker " << leader << ": " << answer.error().message();
    co_return out;
  }
  if (answer.value().error_code != 0) {
    std::fill(out.begin(), out.end(), for_producer(static_cast<p::error_code>(answer.value().error_code)));
    co_return out;
  }
  for (const auto& result : answer.value().results_by_transaction)
    for (const auto& topic : result.topic_results)
      for (const auto& part : topic.results_by_partition)
        for (std::size_t i = 0; i < partitions.size(); ++i)
          if (partitions[i].topic == topic.name && partitions[i].partition.value() == part.partition_index)
            out[i] = for_producer(static_cast<p::error_code>(part.partition_error_code));
  co_return out;
}

boost::asio::awaitable<std::map<topic_partition, verified_batch>> verify_transactional_batches(
    request_context& ctx, const p::produce_request& request) {
  std::map<topic_partition, verified_batch> out;
  const bool has_id = request.transactional_id && !request.transactional_id->empty();
  std::optional<txn::producer_identity> producer;
  std::vector<topic_partition> asked;
  for (const auto& topic : request.topic_data) {
    for (const auto& partition : topic.partition_data) {
      if (!partition.records || partition.records->bytes.size() < model::batch_header_size) continue;
      const model::batch_header_view header(partition.records->bytes);
      if (!header.is_transactional()) continue;
      topic_partition tp{topic.name, partition.index};
      if (!has_id) {
        out[tp] = {.error = p::error_code::invalid_txn_state};  // no coordinator to ask
        continue;
      }
      const auto leader = ctx.broker.partitions.leader_for(tp);
      if (!leader) continue;  // the append reports it
      const auto entry = leader.value()->log().producer(header.producer());
      if (entry && entry->epoch == header.epoch() && entry->ongoing_txn) continue;
      out[tp] = {.partition = leader.value(), .guard = leader.value()->begin_txn_verification(header.producer())};
      asked.push_back(std::move(tp));
      producer = txn::producer_identity{header.producer(), header.epoch()};
    }
  }
  if (asked.empty()) co_return out;
  const auto answers = co_await verify_with_coordinator(ctx, *request.transactional_id, *producer, asked);
  for (std::size_t i = 0; i < asked.size(); ++i) out[asked[i]].error = answers[i];
  co_return out;
}

}  // namespace ferry::server
