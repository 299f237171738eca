#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/control_record.h"
#include "model/ids.h"
#include "model/record_batch.h"

namespace ferry::storage {

// One of a producer's recent batches, as appended.
struct producer_batch {
  std::int32_t first_sequence = 0;
  std::int32_t last_sequence = 0;
  offset first_offset;
  offset last_offset;
  std::int64_t max_timestamp = -1;

  bool operator==(const producer_batch&) const = default;
};

// What a partition knows about one idempotent or transactional producer: its epoch and its last batches,
// oldest first. Five are kept because a producer has at most five requests in flight, so a retry repeats one
// of them.
struct producer_entry {
  static constexpr std::size_t retained_batches = 5;

  producer_epoch epoch{-1};
  std::vector<producer_batch> batches;
  // The epoch of the transaction coordinator that wrote the producer's last marker; -1 before any.
  std::int32_t coordinator_epoch = -1;
  // The first offset of the producer's open transaction: its first transactional batch since the last marker.
  std::optional<offset> ongoing_txn;
  // The max timestamp of its last batch or marker (Kafka's lastTimestamp), from which producer.id.expiration.ms
  // counts; -1 when unknown (a snapshot entry without batches): it then counts from the next expiry check.
  std::int64_t last_timestamp = -1;

  bool operator==(const producer_entry&) const = default;
};

// A transaction that a marker ended: its first offset, the marker's offset, and whether it was aborted.
struct completed_txn {
  producer_id producer;
  offset first;
  offset last;
  bool aborted = false;

  bool operator==(const completed_txn&) const = default;
};

// Idempotent and transactional producers' state in one partition, following Kafka's ProducerStateManager and
// ProducerAppendInfo. For a data batch with a producer id:
//  - an unknown producer id (never seen, or forgotten after retention removed its batches) is accepted
//    with any sequence, as Kafka does since KIP-360;
//  - an epoch older than the producer's is refused: invalid_producer_epoch (the producer was fenced);
//  - a newer epoch must start over at sequence 0, else out_of_order_sequence;
//  - in the same epoch, a batch whose first and last sequence equal one of the retained batches' is a
//    duplicate (a retry): the log writes nothing and answers with the original offsets;
//  - otherwise its first sequence must follow the last one (wrapping from INT32_MAX to 0), else
//    out_of_order_sequence;
//  - a non-transactional batch while the producer's transaction is open is invalid_txn_state.
// A transactional batch opens a transaction if none is open. A transaction marker (model/control_record.h) from
// an older producer epoch is invalid_producer_epoch, from an older coordinator epoch coordinator_fenced; it ends
// the open transaction, if any, and moves the producer to its epoch.
//
// The last stable offset (LSO) is below every open transaction, and below every ended one whose marker the high
// watermark has not passed yet (Kafka's unreplicated transactions): read_committed consumers read up to it.
//
// The state survives restarts through snapshots, written by the log as "<20-digit offset>.snapshot"
// (file_names.h) holding the state after every batch below that offset; the log replays batch headers
// from there. Snapshot format, big-endian:
//   0   2  version (int16) = 2 (version 1, still read, has neither the coordinator epoch nor the open
//          transaction, and at least one batch per producer)
//   2   4  CRC-32C (uint32) of every byte after this field
//   6   4  producer count (int32)
//   then per producer:
//       8  producer id (int64)
//       2  epoch (int16)
//       4  coordinator epoch (int32)
//       8  first offset of the open transaction (int64), -1 for none
//       1  batch count (int8), 0 to 5
//       per batch, oldest first (32 bytes):
//         4  first sequence (int32)
//         4  last sequence (int32)
//         8  first offset (int64)
//         8  last offset (int64)
//         8  max timestamp (int64)
// Ended transactions waiting for the high watermark are not in snapshots, as in Kafka.
//
// Not thread-safe: the log guards it.
class producer_state_manager {
 public:
  // Checks a data batch before it is appended: the original batch when it is a duplicate, nullopt when it may
  // be appended, or out_of_order_sequence / invalid_producer_epoch / invalid_txn_state.
  [[nodiscard]] result<std::optional<producer_batch>> check(const model::batch_header_view& batch) const;
  // The epoch check alone, for a batch a coordinator writes under the producer's id: nullopt or
  // invalid_producer_epoch.
  [[nodiscard]] result<std::optional<producer_batch>> check_epoch(const model::batch_header_view& batch) const;
  // Records an appended data batch (its offsets assigned), or one replayed from the log.
  void update(const model::batch_header_view& batch);

  // Checks a transaction marker of this producer epoch and coordinator epoch before it is appended.
  [[nodiscard]] result<void> check_marker(producer_id producer, producer_epoch epoch,
                                          std::int32_t coordinator_epoch) const;
  // Records an appended (or replayed) marker batch: the transaction it ended, nullopt when none was open.
  std::optional<completed_txn> complete(const model::batch_header_view& marker_batch, const model::txn_marker& marker);

  // The first offset of the oldest open transaction, or of an ended one whose marker is at or past
  // `high_watermark`; nullopt when there is none. Forgets ended transactions the high watermark passed.
  [[nodiscard]] std::optional<offset> first_unstable_offset(offset high_watermark);
  // The first offset of the oldest open transaction, if any: what an aborted transaction's index entry records
  // as the last stable offset (with the marker's offset + 1 when none is open).
  [[nodiscard]] std::optional<offset> first_open_txn() const;

  [[nodiscard]] std::optional<producer_entry> find(producer_id id) const;
  [[nodiscard]] const std::unordered_map<producer_id, producer_entry>& all() const { return producers_; }
  // Forgets producers whose last batch is below the log start offset, as Kafka does when retention
  // removes their batches, unless their transaction is still open.
  void remove_before(offset log_start);
  // Forgets producers whose last batch or marker is `expiration_ms` (producer.id.expiration.ms) older than
  // `now_ms`, unless their transaction is still open (Kafka's removeExpiredProducers): idempotent producers
  // come and go (every producer instance has an id of its own), and the state must not grow with them. A
  // forgotten producer's next batch is taken as a new producer's. Returns how many were forgotten.
  std::size_t remove_expired(std::int64_t now_ms, std::int64_t expiration_ms);

  [[nodiscard]] std::vector<std::byte> serialize() const;
  // corrupt_log when the bytes are not a snapshot this version or the one before wrote, or fail the CRC.
  static result<producer_state_manager> deserialize(std::span<const std::byte> bytes);

 private:
  void open_txn(producer_id id, producer_entry& entry, offset first);

  std::unordered_map<producer_id, producer_entry> producers_;
  // Open transactions by first offset, for the LSO.
  std::map<offset, producer_id> open_txns_;
  // Ended transactions by first offset, with their markers' offsets, until the high watermark passes the marker.
  std::map<offset, offset> unreplicated_txns_;
};

}  // namespace ferry::storage
