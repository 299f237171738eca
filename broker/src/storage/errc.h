#pragma once

#include <system_error>

namespace ferry::storage {

// Why the storage layer refused a request. Disk I/O failures are not listed: they pass through as the
// std::system_category error_code of the failing call (the server answers KAFKA_STORAGE_ERROR for them).
// Each value maps to one Kafka error code in the server's error mapping.
enum class errc {
  offset_out_of_range = 1,  // OFFSET_OUT_OF_RANGE (1): below the log start or above the log end offset
  out_of_order_sequence,    // OUT_OF_ORDER_SEQUENCE_NUMBER (45): a gap or a stale, unretained sequence
  invalid_producer_epoch,   // INVALID_PRODUCER_EPOCH (47): an older producer epoch, fenced by a newer one
  corrupt_log,              // KAFKA_STORAGE_ERROR (56): segment bytes or an index disagree with what was written
  log_closed,               // NOT_LEADER_OR_FOLLOWER (6): the log was closed or removed while a request held it
  topic_id_mismatch,        // UNKNOWN_TOPIC_ID (100): the log on disk belongs to an older topic of the same name
  log_dir_offline,          // KAFKA_STORAGE_ERROR (56): an fsync or write failed in the log's dir (log_dir.h)
  log_dir_in_use,           // startup only: another process holds the log dir's lock
  out_of_order_offsets,     // UNKNOWN_SERVER_ERROR (-1): a replicated batch does not start at the follower's log end
  missing_key,              // CORRUPT_MESSAGE (2): a record without a key for a compacted log (as Kafka refuses it)
  invalid_txn_state,        // INVALID_TXN_STATE (48): a non-transactional batch from a producer inside a transaction
  coordinator_fenced,       // TRANSACTION_COORDINATOR_FENCED (52): a marker from an older coordinator epoch
  role_changed,             // NOT_LEADER_OR_FOLLOWER (6): a leader's append after a newer epoch began or the replica
                            // began to follow, or a follower's after it began to lead
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::storage

template <>
struct std::is_error_code_enum<ferry::storage::errc> : std::true_type {};
