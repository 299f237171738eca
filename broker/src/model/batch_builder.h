#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "model/ids.h"
#include "model/record_batch.h"

namespace ferry::model {

// Writes a RecordBatch v2 as a producer does: records are added one by one (offset deltas 0, 1, 2, ...,
// timestamps relative to the first record's), and finish() compresses them with the codec, writes the
// header and computes the CRC. Used where the broker writes batches itself: recompressing for a topic's
// compression.type, and the records of internal topics.
class batch_builder {
 public:
  struct options {
    compression codec = compression::none;
    timestamp_type timestamps = timestamp_type::create_time;
    offset base_offset{0};
    leader_epoch partition_leader_epoch{-1};
    producer_id producer = no_producer_id;
    producer_epoch epoch{-1};
    std::int32_t base_sequence = -1;
    bool transactional = false;
    bool control = false;
    // The timestamp deltas are taken from; nullopt: the first record's timestamp.
    std::optional<std::int64_t> base_timestamp;
  };
  using header = std::pair<std::string_view, std::optional<std::span<const std::byte>>>;

  explicit batch_builder(options opts) : options_(opts) {}

  // A record with its headers given one by one.
  void add(std::int64_t timestamp, std::optional<std::span<const std::byte>> key,
           std::optional<std::span<const std::byte>> value, std::span<const header> headers = {});
  // A record whose headers are already encoded (header_count of them, as records.h lays them out).
  void add_encoded(std::int64_t timestamp, std::optional<std::span<const std::byte>> key,
                   std::optional<std::span<const std::byte>> value, std::int32_t header_count,
                   std::span<const std::byte> encoded_headers);

  [[nodiscard]] std::int32_t records() const { return count_; }

  // The batch; errc::invalid_record_count without records.
  [[nodiscard]] result<std::vector<std::byte>> finish() const;

 private:
  void begin_record(std::int64_t timestamp, std::size_t body_size_hint);
  void varint(std::int64_t v);
  void bytes(std::optional<std::span<const std::byte>> b);

  options options_;
  std::vector<std::byte> records_;
  std::vector<std::byte> body_;
  std::int32_t count_ = 0;
  std::int64_t base_timestamp_ = -1;
  std::int64_t max_timestamp_ = -1;
};

// The same batch (header fields, records, timestamps, producer fields) with its records encoded in `codec`,
// for a topic whose compression.type differs from the producer's codec (Kafka recompresses on append too).
// `batch` must have passed validate_batch and validate_records with `max_record_bytes`.
[[nodiscard]] result<std::vector<std::byte>> recompress(std::span<const std::byte> batch, compression codec,
                                                        std::size_t max_record_bytes);

// `original` (a stored batch) with only some of its records, as compaction rewrites a batch: the same base
// offset and last offset delta (so its offsets, and a producer's last sequence, stay what they were), producer
// fields, attributes, base timestamp and codec; the kept records' bytes are copied unchanged, since their offset
// and timestamp deltas stay relative to the same base. `kept` holds `count` whole records (record_view::raw).
// `max_timestamp` is the kept records' largest, for a CreateTime batch (LogAppendTime keeps the header's). With
// no records the batch is Kafka's empty batch: the header alone, uncompressed, with its max timestamp as it was.
[[nodiscard]] result<std::vector<std::byte>> retain_records(std::span<const std::byte> original,
                                                            std::span<const std::byte> kept, std::int32_t count,
                                                            std::int64_t max_timestamp);

}  // namespace ferry::model
