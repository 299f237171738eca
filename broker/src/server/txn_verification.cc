#include "server/txn_verification.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"
#include "model/record_batch.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {
namespace p = protocol;
namespace asio = boost::asio;
namespace {

// AddPartitionsToTxn v4: the first with VerifyOnly (the batched form, between brokers).
constexpr std::int16_t verify_version = 4;
// Produce v12: a transactional batch adds its partition to the transaction (KIP-890 part 2).
constexpr std::int16_t first_produce_version_adding = 12;

constexpr std::chrono::milliseconds add_retry_backoff{20};
constexpr std::chrono::milliseconds add_retry_for{100};

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

// The coordinator's own answers, before for_producer; COORDINATOR_NOT_AVAILABLE when it cannot be asked.
boost::asio::awaitable<std::vector<p::error_code>> ask_coordinator(request_context& ctx, const std::string& id,
                                                                   txn::producer_identity producer,
                                                                   const std::vector<topic_partition>& partitions,
                                                                   txn_check check) {
  auto& broker = ctx.broker;
  std::vector<p::error_code> out(partitions.size(), p::error_code::coordinator_not_available);
  const auto view = broker.cluster.view();
  const auto* info = view->find_partition(
      {std::string(txn::transaction_state_topic), partition_id{broker.transactions.partition_for(id)}});
  if (info == nullptr || !info->state || !view->is_live(info->state->leader)) co_return out;
  const auto leader = info->state->leader;
  if (leader == broker_id{broker.config.broker_id} && check == txn_check::add) {
    auto reply = std::make_shared<handlers::coordinator_reply<std::error_code>>(ctx.connection.executor);
    broker.transactions.add_partitions(id, producer, partitions, /*by_broker=*/true, broker.clock.now_ms(),
                                       reply->callback());
    while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
    std::fill(out.begin(), out.end(), reply->value() ? to_kafka_error(reply->value()) : p::error_code::none);
    co_return out;
  }
  if (leader == broker_id{broker.config.broker_id}) {
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      const auto verified = broker.transactions.verify_partition(id, producer, partitions[i]);
      out[i] = verified ? to_kafka_error(verified) : p::error_code::none;
    }
    co_return out;
  }
  p::add_partitions_to_txn_request request;
  auto& txn = request.transactions.emplace_back();
  txn.transactional_id = id;
  txn.producer_id = producer.id;
  txn.producer_epoch = producer.epoch;
  txn.verify_only = check == txn_check::verify;
  for (const auto& tp : partitions) {
    if (txn.topics.empty() || txn.topics.back().name != tp.topic) txn.topics.emplace_back().name = tp.topic;
    txn.topics.back().partitions.push_back(tp.partition.value());
  }
  const auto answer = co_await broker.peers.call<p::add_partitions_to_txn_request, p::add_partitions_to_txn_response>(
      view->brokers.at(leader), request, verify_version);
  if (!answer) {
    FERRY_LOG_LIMITED(warn, "txn", 10000) << "cannot check transactional batches with the coordinator of " << id
                                          << ", broker " << leader << ": " << answer.error().message();
    co_return out;
  }
  if (answer.value().error_code != 0) {
    std::fill(out.begin(), out.end(), static_cast<p::error_code>(answer.value().error_code));
    co_return out;
  }
  for (const auto& result : answer.value().results_by_transaction)
    for (const auto& topic : result.topic_results)
      for (const auto& part : topic.results_by_partition)
        for (std::size_t i = 0; i < partitions.size(); ++i)
          if (partitions[i].topic == topic.name && partitions[i].partition.value() == part.partition_index)
            out[i] = static_cast<p::error_code>(part.partition_error_code);
  co_return out;
}

}  // namespace

boost::asio::awaitable<std::vector<p::error_code>> check_with_coordinator(
    request_context& ctx, const std::string& id, txn::producer_identity producer,
    const std::vector<topic_partition>& partitions, txn_check check) {
  // A producer of transaction version 2 begins its next transaction as soon as EndTxn is answered, usually while
  // the markers of the last one are still going out: the add is retried here for a moment (Kafka's
  // add.partitions.to.txn.retry.backoff.ms and .max.ms) before the producer is told to retry.
  const auto give_up = std::chrono::steady_clock::now() + add_retry_for;
  auto answers = co_await ask_coordinator(ctx, id, producer, partitions, check);
  const auto busy = [&] {
    return std::find(answers.begin(), answers.end(), p::error_code::concurrent_transactions) != answers.end();
  };
  while (check == txn_check::add && busy() && std::chrono::steady_clock::now() < give_up) {
    asio::steady_timer backoff(ctx.connection.executor, add_retry_backoff);
    co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
    answers = co_await ask_coordinator(ctx, id, producer, partitions, check);
  }
  for (auto& answer : answers) answer = for_producer(answer);
  co_return answers;
}

boost::asio::awaitable<std::map<topic_partition, verified_batch>> verify_transactional_batches(
    request_context& ctx, const p::produce_request& request) {
  std::map<topic_partition, verified_batch> out;
  const auto check = ctx.version() >= first_produce_version_adding ? txn_check::add : txn_check::verify;
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
      auto& batch = out[tp];
      batch.partition = leader.value();
      if (check == txn_check::verify) batch.guard = leader.value()->begin_txn_verification(header.producer());
      asked.push_back(std::move(tp));
      producer = txn::producer_identity{header.producer(), header.epoch()};
    }
  }
  if (asked.empty()) co_return out;
  const auto answers = co_await check_with_coordinator(ctx, *request.transactional_id, *producer, asked, check);
  for (std::size_t i = 0; i < asked.size(); ++i) out[asked[i]].error = answers[i];
  co_return out;
}

}  // namespace ferry::server
