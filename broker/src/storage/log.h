#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"
#include "storage/errc.h"
#include "storage/log_config.h"
#include "storage/producer_state.h"

namespace ferry::storage {

// A byte range of a segment file, sent to a socket with sendfile(2). Holding it keeps the file open, so a
// segment deleted by retention while a fetch is sending it stays readable until the send finishes.
struct file_slice {
  std::shared_ptr<io::file> file;
  std::uint64_t position = 0;
  std::uint32_t length = 0;
};

// What a read found: whole batches starting at or before the requested offset (Kafka returns the batch that
// contains the offset), in order, split over one or more segment files.
struct read_result {
  std::vector<file_slice> slices;
  std::uint64_t total_bytes = 0;
  // The offsets the returned batches span: the first batch's base offset, and one past the last batch's last
  // offset. Equal when nothing was returned.
  offset first_offset;
  offset next_offset;
};

struct append_result {
  offset base_offset;
  offset last_offset;
  std::int64_t log_append_time_ms = -1;  // -1 unless the topic uses LogAppendTime
  offset log_start_offset;
  // True when the batch repeated one of the producer's last five batches: nothing was written and the
  // offsets above are the ones the original append got.
  bool duplicate = false;
};

// One partition's log: a directory of segments named by base offset. Appends are serialised by the caller
// holding the partition; reads may run concurrently with appends (they see a prefix of the log).
//
// See segment.h for the files and their formats.
class log {
 public:
  virtual ~log() = default;

  // Appends one client batch that model::validate_batch accepted. Assigns offsets by rewriting the
  // batch's base offset and partition leader epoch in place (the caller's buffer), checks and updates the
  // idempotent producer state, writes the bytes verbatim, updates the indexes, rolls the segment when
  // full or old, and flushes according to the flush policy.
  virtual result<append_result> append(std::span<std::byte> batch, leader_epoch epoch) = 0;

  // Batches from the one containing `from` onwards, up to `max_bytes` (but always at least one whole batch
  // if any exists at or after `from`, so consumers make progress past a large batch), never past `upto`
  // (exclusive; the high watermark). offset_out_of_range when `from` is below the log start or above the
  // log end offset.
  virtual result<read_result> read(offset from, std::uint64_t max_bytes, offset upto) = 0;

  // The first record whose timestamp is >= ts, with that timestamp: the time indexes find the first batch
  // whose max timestamp is >= ts, and its records (decompressed if need be) the record in it, as Kafka
  // does. nullopt when no batch is that new.
  struct timestamp_match {
    offset found;
    std::int64_t timestamp;
  };
  virtual result<std::optional<timestamp_match>> offset_for_timestamp(std::int64_t ts) = 0;
  // The offset and timestamp of the first record with the largest timestamp (ListOffsets -3).
  virtual std::optional<timestamp_match> max_timestamp() = 0;

  [[nodiscard]] virtual offset log_start_offset() const = 0;
  [[nodiscard]] virtual offset log_end_offset() const = 0;
  [[nodiscard]] virtual std::uint64_t size_bytes() const = 0;
  [[nodiscard]] virtual std::size_t segment_count() const = 0;

  // Idempotent producers' state, as rebuilt from the log; used to answer a retried batch.
  [[nodiscard]] virtual std::optional<producer_entry> producer(producer_id id) const = 0;

  virtual void update_config(const log_config& config) = 0;
  // Deletes whole segments that retention.ms or retention.bytes no longer keep (never the active one).
  // Returns how many were deleted.
  virtual result<std::size_t> apply_retention() = 0;
  // Flushes if log.flush.interval.ms has passed since the last flush.
  virtual result<void> maybe_flush_by_time() = 0;
  virtual result<void> flush() = 0;
  // Flushes, writes the producer-state snapshot and closes the files. After a clean close the next open
  // skips recovery.
  virtual result<void> close() = 0;
};

// Opens (or creates) the log in `directory`. If the log was not closed cleanly (see log_manager's clean
// shutdown marker), recovery runs: segments after the last flushed point are scanned, each batch's length
// and CRC checked, the active segment truncated at the first bad byte (logged as a warning), and the
// indexes rebuilt.
struct open_options {
  std::shared_ptr<io::file_system> fs;
  const ferry::clock* clock = nullptr;
  std::filesystem::path directory;
  log_config config;
  bool needs_recovery = false;
};
result<std::unique_ptr<log>> open_log(const open_options& options);

}  // namespace ferry::storage
