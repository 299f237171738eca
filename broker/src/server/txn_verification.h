#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include <boost/asio/awaitable.hpp>

#include "protocol/messages/produce.h"
#include "replication/partition.h"
#include "server/request_context.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {

// What a partition leader (or the group coordinator, for a transaction's offsets) asks the transaction
// coordinator: whether the partition is in the producer's open transaction (KIP-890 part 1), or, for producers
// of transaction version 2 (Produce v12+, TxnOffsetCommit v5+), to add it, which such producers leave to
// the broker instead of sending AddPartitionsToTxn or AddOffsetsToTxn themselves (KIP-890 part 2).
enum class txn_check : std::uint8_t { verify, add };

// A transactional batch whose partition the transaction coordinator was asked about (KIP-890).
struct verified_batch {
  protocol::error_code error = protocol::error_code::none;  // none: append it (with append_verified if guarded)
  std::shared_ptr<replication::partition> partition;
  // Verified batches only: a marker of the producer that reaches the partition before the append voids it (the
  // transaction confirmed has ended). A batch whose partition was added needs none: a marker of the last
  // transaction that lands first carries an epoch no later than the batch's, and one of this transaction a
  // later epoch, which the log refuses the batch for.
  std::optional<std::uint64_t> guard;
};

// Asks the transaction coordinator, in one request, whether each partition of the produce request whose
// transactional batch would open its producer's transaction there is in that transaction (from Produce v12, to
// add it). Partitions where the transaction is already open, and non-transactional batches, are not asked about
// and are left out. A coordinator that cannot answer makes the batches fail with NOT_ENOUGH_REPLICAS, which
// producers retry (as Kafka answers them). A transactional batch in a request without a transactional id gets
// INVALID_TXN_STATE.
boost::asio::awaitable<std::map<topic_partition, verified_batch>> verify_transactional_batches(
    request_context& ctx, const protocol::produce_request& request);

// Asks the transactional id's coordinator whether each partition is in the producer's open transaction, or to
// add it: one error code per partition, as a producer is told them (NOT_ENOUGH_REPLICAS, which producers retry,
// when the coordinator cannot answer or is busy ending the last transaction).
boost::asio::awaitable<std::vector<protocol::error_code>> check_with_coordinator(
    request_context& ctx, const std::string& transactional_id, txn::producer_identity producer,
    const std::vector<topic_partition>& partitions, txn_check check);

}  // namespace ferry::server
