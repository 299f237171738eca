#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"
#include "server/txn_verification.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// TxnOffsetCommit v5: the group's offsets partition joins the transaction here, not through AddOffsetsToTxn
// (KIP-890 part 2).
constexpr std::int16_t first_version_adding = 5;

}  // namespace

// TxnOffsetCommit: offsets committed inside the producer's transaction, written to the group's
// __consumer_offsets partition under the producer's id and held pending until the transaction's marker reaches
// that partition (group_coordinator::complete_txn). The partition must be in the transaction (AddOffsetsToTxn
// before v5, which the transaction coordinator confirms first, KIP-890 part 1; from v5 the coordinator is asked
// to add it), so an offset commit cannot outlive its transaction. v3+ names the member and generation, checked as for
// OffsetCommit (KIP-447). Needs Write on the transactional id and Read on the group (or every partition is
// refused with that error) and Read on each topic.
awaitable<p::txn_offset_commit_response> handle_txn_offset_commit(request_context& ctx,
                                                                  p::txn_offset_commit_request& request) {
  const auto view = ctx.broker.cluster.view();
  const auto now = ctx.broker.clock.now_ms();
  group::group_coordinator::commit_request commit;
  commit.member_id = request.member_id;
  commit.group_instance_id = request.group_instance_id;
  commit.generation = request.generation_id_or_member_epoch;
  commit.transaction = group::group_coordinator::txn_producer{request.producer_id, request.producer_epoch};
  // Each partition's index in the commit, or the error that left it out.
  std::vector<std::vector<std::variant<std::size_t, p::error_code>>> slots;
  const auto whole_refusal =
      !authorize(ctx, authz::operation::write, authz::resource_type::transactional_id, request.transactional_id)
          ? std::optional(p::error_code::transactional_id_authorization_failed)
      : !authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)
          ? std::optional(p::error_code::group_authorization_failed)
          : std::nullopt;
  for (const auto& topic : request.topics) {
    auto& topic_slots = slots.emplace_back();
    const auto refusal = whole_refusal ? whole_refusal
                         : !authorize(ctx, authz::operation::read, authz::resource_type::topic, topic.name)
                             ? std::optional(p::error_code::topic_authorization_failed)
                             : std::nullopt;
    for (const auto& part : topic.partitions) {
      const topic_partition tp{topic.name, part.partition_index};
      if (refusal) {
        topic_slots.emplace_back(*refusal);
        continue;
      }
      if (view->find_partition(tp) == nullptr) {
        topic_slots.emplace_back(p::error_code::unknown_topic_or_partition);
        continue;
      }
      topic_slots.emplace_back(commit.offsets.size());
      commit.offsets.push_back({tp,
                                {.committed = part.committed_offset,
                                 .epoch = part.committed_leader_epoch,
                                 .metadata = part.committed_metadata.value_or(""),
                                 .commit_timestamp_ms = now}});
    }
  }
  auto& groups = ctx.broker.groups;
  std::vector<p::error_code> results(commit.offsets.size(), p::error_code::none);
  if (!commit.offsets.empty()) {
    // Named, not braced in the co_await expression: GCC 12 miscompiles braced temporaries there.
    const std::vector<topic_partition> offsets_partition{
        {std::string(group::offsets_topic), partition_id{groups.partition_for(request.group_id)}}};
    const txn::producer_identity producer{request.producer_id, request.producer_epoch};
    const auto check = ctx.version() >= first_version_adding ? txn_check::add : txn_check::verify;
    const auto verified =
        co_await check_with_coordinator(ctx, request.transactional_id, producer, offsets_partition, check);
    if (verified.front() != p::error_code::none) {
      // Producers retry NOT_ENOUGH_REPLICAS from Produce only; here, as Kafka's group coordinator answers, the
      // retriable error is COORDINATOR_NOT_AVAILABLE.
      const auto answer = verified.front() == p::error_code::not_enough_replicas
                              ? p::error_code::coordinator_not_available
                              : verified.front();
      std::fill(results.begin(), results.end(), answer);
    } else {
      auto reply = std::make_shared<coordinator_reply<std::vector<std::error_code>>>(ctx.connection.executor);
      groups.commit(request.group_id, std::move(commit), now, reply->callback());
      while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
      for (std::size_t i = 0; i < results.size(); ++i) results[i] = to_kafka_error(reply->value().at(i));
    }
  }
  p::txn_offset_commit_response response;
  for (std::size_t t = 0; t < request.topics.size(); ++t) {
    auto& topic = response.topics.emplace_back();
    topic.name = request.topics[t].name;
    for (std::size_t i = 0; i < request.topics[t].partitions.size(); ++i) {
      const auto& slot = slots[t][i];
      const auto* index = std::get_if<std::size_t>(&slot);
      const auto code = index != nullptr ? results[*index] : std::get<p::error_code>(slot);
      topic.partitions.push_back({request.topics[t].partitions[i].partition_index, ctx.error(code)});
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
