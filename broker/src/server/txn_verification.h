#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include <boost/asio/awaitable.hpp>

#include "protocol/messages/produce.h"
#include "replication/partition.h"
#include "server/request_context.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {

// A transactional batch whose partition the transaction coordinator was asked about (KIP-890 part 1).
struct verified_batch {
  protocol::error_code error = protocol::error_code::none;  // none: append it with append_verified
  std::shared_ptr<replication::partition> partition;
  std::uint64_t guard = 0;
};

// Asks the transaction coordinator, in one request, whether each partition of the produce request whose
// transactional batch would open its producer's transaction there is in that transaction. Partitions where the
// transaction is already open, and non-transactional batches, are not asked about and are left out. A
// coordinator that cannot answer makes the batches fail with NOT_ENOUGH_REPLICAS, which producers retry (as
// Kafka answers them). A transactional batch in a request without a transactional id gets INVALID_TXN_STATE.
boost::asio::awaitable<std::map<topic_partition, verified_batch>> verify_transactional_batches(
    request_context& ctx, const protocol::produce_request& request);

// Asks the transactional id's coordinator whether each partition is in the producer's open transaction: one
// error code per partition, as a producer is told them (NOT_ENOUGH_REPLICAS when the coordinator cannot answer).
boost::asio::awaitable<std::vector<protocol::error_code>> verify_with_coordinator(
    request_context& ctx, const std::string& transactional_id, txn::producer_identity producer,
    const std::vector<topic_partition>& partitions);

}  // namespace ferry::server
