#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "model/ids.h"

namespace ferry::storage {

// The first record of one stored batch whose timestamp is >= ts, as Kafka's ListOffsets by timestamp
// answers (FileRecords.searchForTimestamp): a lookup lands on a record, not on the batch around it.
//
// The records are decompressed if the batch is compressed (gzip, snappy raw or xerial-framed, lz4 frame,
// zstd), up to max_record_bytes of record data. With LogAppendTime every record has the batch's max
// timestamp. nullopt when no record is that new, or when the records cannot be read (a corrupt or
// oversized payload): the caller then falls back to the batch's first offset.
struct record_match {
  offset found;
  std::int64_t timestamp;
};
inline constexpr std::size_t max_record_bytes = 64 * 1024 * 1024;

[[nodiscard]] std::optional<record_match> first_record_at_or_after(std::span<const std::byte> batch, std::int64_t ts);

}  // namespace ferry::storage
