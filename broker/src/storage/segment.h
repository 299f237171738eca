#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string_view>

#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"
#include "model/record_batch.h"
#include "storage/index.h"

namespace ferry::storage {

// One segment of a partition's log: the batches of an offset range starting at the segment's base offset,
// in three files of the partition directory named by that base offset (file_names.h):
//
//   <base>.log        the batches, back to back, exactly as appended (RecordBatch v2,
//                     model/record_batch.h: base offset and leader epoch assigned by the broker)
//   <base>.index      the sparse offset index (offset_index in index.h)
//   <base>.timeindex  the time index (time_index in index.h)
//
// Every offset in a segment is >= its base offset and below the next segment's base offset; the first
// batch starts exactly at the base offset and offsets increase from batch to batch. Relative offsets and
// positions fit the indexes' 4-byte fields: the log rolls before they would not, so a segment stays
// below 2 GiB.
//
// Lifecycle: the log's last segment is active and takes appends, with its indexes kept in memory. When
// the log rolls, seal() writes the final time index entry, fsyncs the files and drops the in-memory
// indexes; a sealed segment never changes again. Retention removes its files; readers that still hold the
// segment (or a file_slice of it) keep reading the open file.
//
// Threading: one writer at a time (append, seal, flush, recover; the log serialises them) and any number
// of concurrent readers (committed, locate, boundary_before, find_timestamp, visit, log_file). A reader
// first takes committed() and then reads only below that extent: the writer only ever writes past it and
// publishes the new extent, together with the index entries, under the segment's mutex.
class segment {
 public:
  // The part of the segment readers may see.
  struct extent {
    std::uint64_t size = 0;           // bytes of whole batches in the .log
    offset next_offset;               // one past the last offset; the base offset while empty
    std::int64_t max_timestamp = -1;  // largest batch max timestamp; -1 while empty
    offset offset_of_max_timestamp;   // base offset of the first batch with that timestamp
  };

  // Where a batch is in the .log.
  struct batch_location {
    std::uint64_t position = 0;
    std::uint64_t size = 0;
    offset base;
    std::int64_t max_timestamp = -1;
  };

  // Creates the empty files of a new active segment (index_bytes: segment.index.bytes).
  static result<std::shared_ptr<segment>> create(io::file_system& fs, const std::filesystem::path& directory,
                                                 offset base, std::int32_t index_bytes);
  // Opens an existing segment. `active` keeps its indexes in memory and checks them entry by entry. An
  // index that is missing or fails the checks is not an error: index_suspect() says so, and the caller
  // runs recover().
  static result<std::shared_ptr<segment>> open(io::file_system& fs, const std::filesystem::path& directory, offset base,
                                               std::int32_t index_bytes, bool active);

  segment(const segment&) = delete;
  segment& operator=(const segment&) = delete;

  [[nodiscard]] bool index_suspect() const { return index_suspect_; }

  // Checks every batch (length, CRC, offsets increasing), cuts the .log at the first bad byte (logged as a
  // warning), rebuilds both indexes and fsyncs the files. Returns the number of bytes cut.
  result<std::uint64_t> recover(std::int32_t index_interval_bytes);

  [[nodiscard]] offset base_offset() const { return base_; }
  [[nodiscard]] const std::shared_ptr<io::file>& log_file() const { return log_; }
  [[nodiscard]] extent committed() const;

  // Writer side.

  // Appends one batch whose offsets are assigned, indexing it when more than index_interval_bytes were
  // appended since the last indexed batch. On failure nothing is published and the bytes written are cut
  // (or, if that fails too, ignored: they lie past the extent and are overwritten or cut later).
  result<void> append(std::span<const std::byte> batch, std::int32_t index_interval_bytes, std::int64_t now_ms);
  // When the segment's age for segment.ms starts: the clock at its first append, or after a restart its
  // first batch's max timestamp (as in Kafka). nullopt while empty.
  [[nodiscard]] std::optional<std::int64_t> rolling_since_ms() const { return rolling_since_ms_; }
  [[nodiscard]] bool index_full() const { return offset_index_.full() || time_index_.full(); }
  result<void> flush();
  // Makes the files final: the last time index entry, no stray bytes past the extent, fsync. Used on roll
  // and close; reads keep working afterwards.
  result<void> seal();
  result<void> remove_files(io::file_system& fs);

  // Reader side; `at` is a committed() extent.

  // The first batch whose last offset is >= target, for target < at.next_offset.
  result<batch_location> locate(offset target, const extent& at) const;
  // The end of the last whole batch that ends at or before `limit`, walking from `start` (a batch boundary);
  // `start` when the first batch ends past it. limit <= at.size.
  struct boundary {
    std::uint64_t position = 0;
    offset next;  // base offset of the batch at `position` (the extent's next offset at its end)
  };
  result<boundary> boundary_before(std::uint64_t start, std::uint64_t limit, const extent& at) const;
  // The first batch whose max timestamp is >= ts; nullopt when none is.
  result<std::optional<batch_location>> find_timestamp(std::int64_t ts, const extent& at) const;
  // Calls fn with the header of each batch whose last offset is >= from, in order.
  result<void> visit(offset from, const extent& at,
                     const std::function<void(const model::batch_header_view&)>& fn) const;

 private:
  segment(const std::filesystem::path& directory, offset base, std::shared_ptr<io::file> log,
          std::shared_ptr<io::file> index, std::shared_ptr<io::file> time, std::int32_t index_bytes, bool active);

  [[nodiscard]] std::filesystem::path path(std::string_view suffix) const;
  result<void> load();
  // Publishes a batch written at `position` into `extent_` and the indexes. Call with the mutex held.
  result<void> add_batch(const model::batch_header_view& header, std::uint64_t position,
                         std::int32_t index_interval_bytes);
  // Appends a time index entry for the extent's largest timestamp if the index does not have it yet.
  result<void> index_max_timestamp(const extent& e);
  result<void> sync_files();

  std::filesystem::path directory_;
  offset base_;
  std::shared_ptr<io::file> log_;
  mutable std::shared_mutex mutex_;  // guards extent_ and the indexes
  offset_index offset_index_;
  time_index time_index_;
  extent extent_;
  // Writer-only state.
  std::uint64_t bytes_since_index_ = 0;
  std::optional<std::int64_t> rolling_since_ms_;
  bool index_suspect_ = false;
};

}  // namespace ferry::storage
