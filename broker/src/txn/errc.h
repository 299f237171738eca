#pragma once

#include <system_error>

namespace ferry::txn {

// What the transaction coordinator refuses, each with the Kafka error it becomes (server/error_mapping.cc).
enum class errc {
  not_coordinator = 1,          // NOT_COORDINATOR: this broker does not lead the id's __transaction_state partition
  coordinator_loading,          // COORDINATOR_LOAD_IN_PROGRESS: the partition's transactions are being read back
  coordinator_not_available,    // COORDINATOR_NOT_AVAILABLE: no producer id could be reserved
  concurrent_transactions,      // CONCURRENT_TRANSACTIONS: a write or the markers of the last transaction pending
  invalid_producer_id_mapping,  // INVALID_PRODUCER_ID_MAPPING: no such transactional id, or another producer id
  producer_fenced,              // PRODUCER_FENCED: a newer producer epoch owns the transactional id
  invalid_txn_state,            // INVALID_TXN_STATE: the request does not fit the transaction's state
  invalid_transaction_timeout,  // INVALID_TRANSACTION_TIMEOUT: not in 1..transaction.max.timeout.ms
  transactional_id_not_found,   // TRANSACTIONAL_ID_NOT_FOUND: DescribeTransactions of an unknown id
  field_too_long,               // INVALID_REQUEST: a transactional id __transaction_state cannot store
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::txn

template <>
struct std::is_error_code_enum<ferry::txn::errc> : std::true_type {};
