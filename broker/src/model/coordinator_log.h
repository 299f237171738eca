#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/result.h"
#include "model/control_record.h"
#include "model/ids.h"

namespace ferry::model {

// A record as a coordinator appends it to its internal topic (__consumer_offsets, __transaction_state).
struct stored_record {
  std::vector<std::byte> key;
  std::optional<std::vector<std::byte>> value;  // nullopt: a tombstone
};

// Kafka's choice of a coordinator key's partition (a group id, a transactional id): Java's String.hashCode of
// the key (over its UTF-16 code units), made non-negative by clearing the sign bit, modulo the partition count.
[[nodiscard]] std::int32_t coordinator_partition_for(std::string_view key, std::int32_t partitions);

// The partitions of a coordinator's internal topic that this broker leads, as the coordinator writes and reads
// them. The server implements it over the replicated partitions.
class coordinator_log {
 public:
  using record = stored_record;
  virtual ~coordinator_log() = default;
  // Appends the records to the partition as one batch and calls `done` once the in-sync replicas have it
  // (acks=all), or with why not. `done` may run on any thread, before append returns too.
  virtual void append(std::int32_t partition, std::vector<record> records,
                      std::function<void(std::error_code)> done) = 0;
  // Appends the records as one transactional batch of the producer (the group coordinator's TxnOffsetCommit):
  // they take effect when a commit marker for the producer follows them, and never after an abort marker.
  virtual void append_transactional(std::int32_t partition, producer_id producer, producer_epoch epoch,
                                    std::vector<record> records, std::function<void(std::error_code)> done) = 0;

  // A record read back, with the producer whose transaction wrote it (no_producer_id: none).
  struct replayed_record {
    std::span<const std::byte> key;
    std::optional<std::span<const std::byte>> value;
    producer_id transactional_producer = no_producer_id;
  };
  // A transaction marker read back.
  struct replayed_marker {
    producer_id producer = no_producer_id;
    marker_type type = marker_type::abort;
  };
  struct replay_visitor {
    std::function<void(const replayed_record&)> record;
    std::function<void(const replayed_marker&)> marker;  // may be empty: markers are skipped
  };
  // Calls the visitor with every record and marker of the partition, oldest first, up to its log end. Blocking.
  virtual result<void> replay(std::int32_t partition, const replay_visitor& visit) = 0;
};

}  // namespace ferry::model
