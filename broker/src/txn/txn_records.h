#pragma once

// The records of the __transaction_state topic, stored exactly as Kafka stores them (its transaction
// coordinator's TransactionLogKey and TransactionLogValue messages, kafka-transaction-coordinator 4.x; Kafka
// 3.x wrote the same version 0), so that Kafka's tools (kafka-dump-log --transaction-log-decoder) read Ferry's
// partitions and a partition Kafka wrote loads into Ferry.
//
// Key: int16 version 0, then the transactional id as a classic string (int16 length, UTF-8 bytes).
// Value: int16 version, then:
//
//   field                  type     versions  notes
//   producer_id            int64    0+
//   producer_epoch         int16    0+
//   timeout_ms             int32    0+        transaction.timeout.ms the producer asked for
//   state                  int8     0+        txn_state below
//   partitions             array    0+        nullable (null while Empty); each: topic string, [int32]
//   last_update_ms         int64    0+        ms since the epoch
//   start_ms               int64    0+        when the transaction began; -1: none
//   tagged fields                   1+        0: previous producer id, 1: next producer id (int64, -1 default),
//                                             2: client transaction version (int16, 0), 3: next producer
//                                             epoch (int16, -1)
//
// Version 1 is flexible (KIP-482): compact strings and arrays and the tagged fields. Ferry writes version 0
// while every tagged field has its default, as Kafka does for clients of transaction version 0 and 1.
//
// A null value is a tombstone: the transactional id expired (transactional.id.expiration.ms). Compaction
// keeps the last record of each key.
//
// Decoders never throw and never read past their input; they accept exactly the versions above, refuse bytes
// left after the last field, and allocate no more than the input's length justifies (bytes::codec_errc).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/ids.h"

namespace ferry::txn {

// A transaction's state as Kafka numbers it in the log (TransactionState).
enum class txn_state : std::int8_t {
  empty = 0,                // no transaction open; the producer id and epoch are current
  ongoing = 1,              // partitions were added
  prepare_commit = 2,       // EndTxn(commit) written; markers going out
  prepare_abort = 3,        // EndTxn(abort), a fenced or timed-out transaction; markers going out
  complete_commit = 4,      // every partition has the commit marker
  complete_abort = 5,       // every partition has the abort marker
  dead = 6,                 // the transactional id expired
  prepare_epoch_fence = 7,  // Kafka's in-memory state while fencing; never written by Ferry
};
inline constexpr std::int8_t max_txn_state = 7;

// Kafka's names (DescribeTransactions, ListTransactions, kafka-transactions.sh).
[[nodiscard]] std::string_view state_name(txn_state state);

struct txn_log_value {
  producer_id pid = no_producer_id;
  producer_id previous_pid = no_producer_id;
  producer_id next_pid = no_producer_id;
  producer_epoch epoch{-1};
  producer_epoch next_epoch{-1};
  std::int32_t timeout_ms = 0;
  txn_state state = txn_state::empty;
  std::vector<topic_partition> partitions;  // sorted
  std::int64_t last_update_ms = 0;
  std::int64_t start_ms = -1;
  std::int16_t client_txn_version = 0;

  bool operator==(const txn_log_value&) const = default;
};

inline constexpr std::int16_t txn_key_version = 0;

[[nodiscard]] std::vector<std::byte> encode_txn_key(std::string_view transactional_id);
[[nodiscard]] result<std::string> decode_txn_key(std::span<const std::byte> key);
// Empty when a topic name is longer than a string can hold (no valid value is empty).
[[nodiscard]] std::vector<std::byte> encode_txn_value(const txn_log_value& value);
[[nodiscard]] result<txn_log_value> decode_txn_value(std::span<const std::byte> value);

}  // namespace ferry::txn
