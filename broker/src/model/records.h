#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "base/result.h"
#include "model/ids.h"
#include "model/record_batch.h"

namespace ferry::model {

// The records inside a RecordBatch v2, after its 61-byte header, each (compressed as one stream when the
// batch has a codec):
//
//   length           varint   bytes of the record after this field
//   attributes       int8     unused
//   timestamp_delta  varlong  from the batch's base timestamp
//   offset_delta     varint   from the batch's base offset: 0, 1, 2, ... in order
//   key_length       varint   -1 for a null key
//   key              bytes
//   value_length     varint   -1 for a null value
//   value            bytes
//   header_count     varint
//   headers          header_count times: key_length varint (>= 0), key, value_length varint (-1: null), value
//
// Varints are zigzag-encoded (bytes/varint.h): at most 5 bytes and an int32 value for varint, 10 for varlong.

// What a walk over a batch's records found.
struct records_summary {
  std::int64_t max_timestamp = -1;  // the largest base timestamp + timestamp delta
  std::size_t record_bytes = 0;     // the records' size, decompressed
};

// Checks every record of a batch that validate_batch accepted, as Kafka's LogValidator does before it
// appends: each record parses and uses exactly its length, lengths and counts are not negative (a header key
// is never null), offset deltas run 0, 1, 2, ..., there are exactly records_count() records and nothing after
// them, and a compressed payload is one whole stream that decompresses to at most `max_record_bytes`. One
// pass, no allocation per record; compressed payloads are read through a fixed window, so a decompression
// bomb costs bounded memory and is refused once it passes the limit.
[[nodiscard]] result<records_summary> validate_records(std::span<const std::byte> batch, std::size_t max_record_bytes);
// The most a produced batch may decompress to. Kafka's max.message.bytes bounds the batch as stored (compressed)
// and Kafka sets no bound here; this one only caps the work a decompression bomb can cause on a network thread
// (memory is bounded by the window either way), far above any batch a producer builds (batch.size is 16 KiB by
// default).
inline constexpr std::size_t max_inflated_batch_bytes = std::size_t{64} << 20;

// The first record whose timestamp is >= ts, with that timestamp, as ListOffsets by timestamp answers
// (Kafka's FileRecords.searchForTimestamp): a lookup lands on a record, not on the batch around it. The batch is
// a stored one: its offset deltas may skip (compaction). With
// LogAppendTime every record has the batch's max timestamp. nullopt when no record is that new or the
// records cannot be read.
struct record_match {
  offset found;
  std::int64_t timestamp;
};
inline constexpr std::size_t max_lookup_record_bytes = std::size_t{64} * 1024 * 1024;
[[nodiscard]] std::optional<record_match> first_record_at_or_after(std::span<const std::byte> batch, std::int64_t ts);

// One record of uncompressed record bytes. The spans point into those bytes.
struct record_view {
  std::int8_t attributes = 0;
  std::int64_t timestamp_delta = 0;
  std::int32_t offset_delta = 0;
  std::optional<std::span<const std::byte>> key;  // nullopt: null
  std::optional<std::span<const std::byte>> value;
  std::int32_t header_count = 0;
  std::span<const std::byte> headers;  // the encoded headers, as on the wire
  std::span<const std::byte> raw;      // the whole record from its length field on (empty when streamed)
};

// Calls fn with each of the `count` records in `records` (uncompressed record bytes, for example from
// decompress_all), with the checks of validate_records.
result<void> for_each_record(std::span<const std::byte> records, std::int32_t count,
                             const std::function<void(const record_view&)>& fn);

// Calls fn with each record of a stored batch (one validate_batch accepted without client rules), inflating a
// compressed payload into `scratch` first; fn returns false to stop. Offset deltas increase but may skip, up to
// the batch's last offset delta: compaction removes records and keeps the others' offsets. The views point into
// `batch` or `scratch`.
result<void> for_each_stored_record(std::span<const std::byte> batch, std::size_t max_record_bytes,
                                    std::vector<std::byte>& scratch, const std::function<bool(const record_view&)>& fn);

}  // namespace ferry::model
