#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/result.h"
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

// What a partition knows about one idempotent producer: its epoch and its last batches, oldest first.
// Five are kept because a producer has at most five requests in flight, so a retry repeats one of them.
struct producer_entry {
  static constexpr std::size_t retained_batches = 5;

  producer_epoch epoch{-1};
  std::vector<producer_batch> batches;

  bool operator==(const producer_entry&) const = default;
};

// Idempotent producers' state in one partition, following Kafka's ProducerStateManager and
// ProducerAppendInfo.checkSequence. For a batch with a producer id:
//  - an unknown producer id (never seen, or forgotten after retention removed its batches) is accepted
//    with any sequence, as Kafka does since KIP-360;
//  - an epoch older than the producer's is refused: invalid_producer_epoch (the producer was fenced);
//  - a newer epoch must start over at sequence 0, else out_of_order_sequence;
//  - in the same epoch, a batch whose first and last sequence equal one of the retained batches' is a
//    duplicate (a retry): the log writes nothing and answers with the original offsets;
//  - otherwise its first sequence must follow the last one (wrapping from INT32_MAX to 0), else
//    out_of_order_sequence.
//
// The state survives restarts through snapshots, written by the log as "<20-digit offset>.snapshot"
// (file_names.h) holding the state after every batch below that offset; the log replays batch headers
// from there. Snapshot format, big-endian:
//   0   2  version (int16) = 1
//   2   4  CRC-32C (uint32) of every byte after this field
//   6   4  producer count (int32)
//   then per producer:
//       8  producer id (int64)
//       2  epoch (int16)
//       1  batch count (int8), 1 to 5
//       per batch, oldest first (32 bytes):
//         4  first sequence (int32)
//         4  last sequence (int32)
//         8  first offset (int64)
//         8  last offset (int64)
//         8  max timestamp (int64)
//
// Not thread-safe: the log guards it.
class producer_state_manager {
 public:
  // Checks a batch before it is appended: the original batch when it is a duplicate, nullopt when it may
  // be appended, or out_of_order_sequence / invalid_producer_epoch.
  [[nodiscard]] result<std::optional<producer_batch>> check(const model::batch_header_view& batch) const;
  // Records an appended batch (its offsets assigned), or one replayed from the log.
  void update(const model::batch_header_view& batch);

  [[nodiscard]] std::optional<producer_entry> find(producer_id id) const;
  // Forgets producers whose last batch is below the log start offset, as Kafka does when retention
  // removes their batches.
  void remove_before(offset log_start);

  [[nodiscard]] std::vector<std::byte> serialize() const;
  // corrupt_log when the bytes are not a snapshot this version wrote, or fail the CRC.
  static result<producer_state_manager> deserialize(std::span<const std::byte> bytes);

 private:
  std::unordered_map<producer_id, producer_entry> producers_;
};

}  // namespace ferry::storage
