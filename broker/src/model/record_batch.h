#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/result.h"
#include "model/errc.h"
#include "model/ids.h"

namespace ferry::model {

// Kafka RecordBatch v2 (magic 2), the unit Ferry receives, stores and serves. All integers are big-endian.
//
//   offset size field
//   0      8    base_offset            first offset in the batch; assigned by the broker
//   8      4    batch_length           bytes after this field (total size - 12)
//   12     4    partition_leader_epoch assigned by the broker; outside the CRC
//   16     1    magic                  2
//   17     4    crc                    CRC-32C of bytes 21..end
//   21     2    attributes             bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control
//   23     4    last_offset_delta      record count - 1
//   27     8    base_timestamp
//   35     8    max_timestamp
//   43     8    producer_id            -1 when not idempotent
//   51     2    producer_epoch
//   53     4    base_sequence
//   57     4    records_count
//   61     ...  records (compressed as one blob when the codec is not 0)
//
// Because base_offset and partition_leader_epoch precede the CRC'd range, the broker assigns them by
// rewriting 12 bytes in place and stores the rest verbatim; the CRC stays valid.
inline constexpr std::size_t batch_header_size = 61;
inline constexpr std::size_t batch_log_overhead = 12;  // base_offset + batch_length
inline constexpr std::int8_t current_magic = 2;

enum class compression : std::uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };
enum class timestamp_type : std::uint8_t { create_time = 0, log_append_time = 1 };

// A read-only view of a batch header. The bytes must hold at least batch_header_size bytes.
class batch_header_view {
 public:
  explicit batch_header_view(std::span<const std::byte> bytes) : bytes_(bytes) {}

  [[nodiscard]] offset base_offset() const;
  [[nodiscard]] std::int32_t batch_length() const;
  [[nodiscard]] std::size_t total_size() const { return static_cast<std::size_t>(batch_length()) + batch_log_overhead; }
  [[nodiscard]] leader_epoch partition_leader_epoch() const;
  [[nodiscard]] std::int8_t magic() const;
  [[nodiscard]] std::uint32_t crc() const;
  [[nodiscard]] std::int16_t attributes() const;
  [[nodiscard]] compression codec() const { return static_cast<compression>(attributes() & 0x07); }
  [[nodiscard]] timestamp_type ts_type() const { return static_cast<timestamp_type>((attributes() >> 3) & 1); }
  [[nodiscard]] bool is_transactional() const { return (attributes() & 0x10) != 0; }
  [[nodiscard]] bool is_control() const { return (attributes() & 0x20) != 0; }
  [[nodiscard]] std::int32_t last_offset_delta() const;
  // Only for a header that offsets_fit(): validate_batch checks it, and so must whoever walks stored headers
  // it did not validate.
  [[nodiscard]] offset last_offset() const { return offset{base_offset().value() + last_offset_delta()}; }
  // last_offset_delta is not negative, and the last offset and the one after it fit in 64 bits. Only a damaged
  // stored batch fails this: the base offset is outside the CRC.
  [[nodiscard]] bool offsets_fit() const;
  [[nodiscard]] std::int64_t base_timestamp() const;
  [[nodiscard]] std::int64_t max_timestamp() const;
  [[nodiscard]] producer_id producer() const;
  [[nodiscard]] producer_epoch epoch() const;
  [[nodiscard]] std::int32_t base_sequence() const;
  [[nodiscard]] std::int32_t last_sequence() const;
  [[nodiscard]] std::int32_t records_count() const;

 private:
  std::span<const std::byte> bytes_;
};

// Writes the two broker-owned fields in place.
void set_base_offset(std::span<std::byte> batch, offset base);
void set_partition_leader_epoch(std::span<std::byte> batch, leader_epoch epoch);
// For LogAppendTime topics: marks the batch's timestamps as broker time, sets its max timestamp and recomputes
// the CRC, which covers both. The one case where the broker changes checksummed bytes.
void set_log_append_time(std::span<std::byte> batch, std::int64_t now_ms);
// Sets a CreateTime batch's max timestamp to what its records hold (validate_records finds it) and
// recomputes the CRC, as Kafka's LogValidator does when a producer wrote a wrong one.
void set_max_timestamp(std::span<std::byte> batch, std::int64_t max_timestamp);

// For a batch whose records section was just written in `codec`: sets the codec bits, the batch length (from
// the span's size) and the CRC.
void set_records_codec(std::span<std::byte> batch, compression codec);

// Checks a batch completely: length, magic, CRC and header consistency. The whole span must be exactly one
// batch. Used on produce (with client rules) and when recovering a log or replicating (without them: a stored
// batch that compaction rewrote holds fewer records than offsets, or none).
struct validation_rules {
  std::size_t max_batch_bytes = 1048588;
  bool from_client = true;  // clients send base offset 0 and no control batches
};
[[nodiscard]] std::error_code validate_batch(std::span<const std::byte> batch, const validation_rules& rules);

// Size of the first batch in `bytes` according to its length field, or 0 if the header is incomplete or
// the length is impossible. Does not check the CRC.
[[nodiscard]] std::size_t peek_batch_size(std::span<const std::byte> bytes);

}  // namespace ferry::model
