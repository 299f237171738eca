#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "model/ids.h"

namespace ferry::model {

// Transaction markers: the control batches a partition leader writes when a transaction ends (Kafka's
// EndTransactionMarker). A marker batch has the transactional and control attribute bits, the producer id and
// epoch of the transaction, base sequence -1, no compression, and one record:
//   key   int16 version = 0, int16 type (0 abort, 1 commit; Kafka's KRaft-only types 2-6 never appear here)
//   value int16 version = 0, int32 coordinator epoch
// Readers accept a higher version with more bytes after these fields, as Kafka's do.
enum class marker_type : std::int16_t { abort = 0, commit = 1 };

struct txn_marker {
  marker_type type = marker_type::abort;
  std::int32_t coordinator_epoch = 0;

  bool operator==(const txn_marker&) const = default;
};

// The marker batch, base offset 0 and leader epoch -1 (the log assigns both).
[[nodiscard]] std::vector<std::byte> build_marker_batch(producer_id producer, producer_epoch epoch, txn_marker marker,
                                                        std::int64_t timestamp_ms);

// The marker in a stored control batch (one validate_batch accepted); malformed_record when its one record is not
// a transaction marker.
[[nodiscard]] result<txn_marker> read_marker(std::span<const std::byte> batch);

}  // namespace ferry::model
