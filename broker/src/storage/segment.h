#pragma once

#include <atomic>
#include <chrono>
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
#include "storage/txn_index.h"

namespace ferry::storage {

// One segment of a partition's log: the batches of an offset range starting at the segment's base offset,
// in three files of the partition directory named by that base offset (file_names.h):
//
//   <base>.log        the batches, back to back, exactly as appended (RecordBatch v2,
//                     model/record_batch.h: base offset and leader epoch assigned by the broker)
//   <base>.index      the sparse offset index (offset_index in index.h)
//   <base>.timeindex  the time index (time_index in index.h)
//   <base>.txnindex   the aborted transactions whose markers the segment holds (txn_index.h), once it has one
//
// Every offset in a segment is >= its base offset and below the next segment's base offset, and offsets
// increase from batch to batch. The first batch starts at the base offset, or after it in a segment compaction
// rewrote (the log cleaner keeps the base of the segments it replaces, and the offsets of what it keeps); such a
// segment may even be empty. Reads step over the gaps. Relative offsets and
// positions fit the indexes' 4-byte fields: the log rolls before they would not, so a segment stays
// below 2 GiB.
//
// Lifecycle: the log's last segment is active and takes appends, with its indexes kept in memory. When
// the log rolls, seal() writes the final time index entry, fsyncs the files and drops the in-memory
// indexes; a sealed segment never changes again. Retention renames its files to "*.deleted" and removes
// them after file.delete.delay.ms; readers that still hold the segment (or a file_slice of it) keep reading
// the open file.
//
// A segment keeps only its .log open while its indexes are idle, so 100,000 segments (or partitions) need
// 100,000 descriptors, not 300,000. A sealed segment's index files are opened on first use and checked entry
// by entry then (whole entries, increasing, positions inside the .log; rebuilt from the .log with a warning
// when they fail); an active segment's are opened at its next index entry (lookups read its entries in
// memory). Both are closed after idle_index_close (release_idle_indexes). A lookup that lands on a batch other than the
// one the index names rebuilds the indexes too, so a damaged index never makes a segment unreadable.
//
// Damage in flushed data (below the log's recovery point) is never cut: recover(keep) ends the readable
// extent before the bad batch and leaves the bytes where they are (damaged()).
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

  // Creates the empty files of a new active segment (index_bytes: segment.index.bytes). `file_suffix` is
  // appended to every file name: the log cleaner writes its segments as "*.cleaned" (file_names.h).
  static result<std::shared_ptr<segment>> create(io::file_system& fs, const std::filesystem::path& directory,
                                                 offset base, std::int32_t index_bytes,
                                                 std::string_view file_suffix = {});
  // Opens an existing segment. `active` keeps its indexes in memory and checks them entry by entry; a sealed
  // segment reads its indexes only as far as its extent needs, then closes them. An index that is missing
  // or fails the checks is not an error: index_suspect() says so, and the caller runs recover().
  static result<std::shared_ptr<segment>> open(io::file_system& fs, const std::filesystem::path& directory, offset base,
                                               std::int32_t index_bytes, bool active);
  // How long a segment's index files stay open after their last use.
  static constexpr std::chrono::seconds idle_index_close{60};

  segment(const segment&) = delete;
  segment& operator=(const segment&) = delete;

  [[nodiscard]] bool index_suspect() const { return index_suspect_; }

  // Checks every batch (length, CRC, offsets increasing), rebuilds both indexes and fsyncs the files. At the
  // first bad byte, damage at an offset below `keep_below` (flushed data: the recovery point) only ends the
  // readable extent and leaves the bytes (damaged() from then on); damage past it is cut (it was never
  // flushed), with a warning. Returns the bytes after the last good batch.
  static constexpr offset cut_everything{0};
  static constexpr offset keep_everything{INT64_MAX};
  result<std::uint64_t> recover(std::int32_t index_interval_bytes, offset keep_below = cut_everything);
  // recover(keep) found damage: bytes past the extent stay, and seal() does not cut them. damage() says what
  // and where.
  [[nodiscard]] bool damaged() const { return damaged_; }
  [[nodiscard]] const std::string& damage() const { return damage_; }

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
  // fdatasync of the .log and of the .txnindex (what a flush owes the records and markers; the offset and time
  // indexes are rebuilt after a crash anyway).
  result<void> flush();
  // Records an aborted transaction whose marker this segment holds (txn_index.h).
  result<void> add_aborted(const aborted_txn& txn);
  // Drops the aborted transactions whose markers are at or past `from`.
  result<void> remove_aborted_from(offset from);
  // Makes the files final: the last time index entry, no stray bytes past the extent, fsync. Runs in the
  // background after a roll, and at close; reads keep working meanwhile and afterwards.
  result<void> seal();
  [[nodiscard]] bool sealed() const { return sealed_.load(); }
  // Renames the files to "<name>.deleted" (retention: readers holding them keep reading); the renamed files
  // are removed later by remove_deleted_files.
  result<void> rename_to_deleted(io::file_system& fs);
  // Renames the files from their current suffix to `file_suffix` ("" for the plain names), the .log last, so
  // that the .log's name tells how far a crash let the change go (the cleaner's swap, file_names.h).
  result<void> rename_files(io::file_system& fs, std::string_view file_suffix);
  result<void> remove_deleted_files(io::file_system& fs) const;
  // Closes the segment's index files if unused since `idle_before`; true when it closed them.
  bool release_idle_indexes(std::chrono::steady_clock::time_point idle_before);
  [[nodiscard]] bool indexes_open() const { return indexes_open_.load(); }

  // Reader side; `at` is a committed() extent.

  // The first batch whose last offset is >= target, for target < at.next_offset.
  result<batch_location> locate(offset target, const extent& at);
  // The end of the last whole batch that ends at or before `limit`, walking from `start` (a batch boundary);
  // `start` when the first batch ends past it. limit <= at.size.
  struct boundary {
    std::uint64_t position = 0;
    offset next;  // base offset of the batch at `position` (the extent's next offset at its end)
  };
  result<boundary> boundary_before(std::uint64_t start, std::uint64_t limit, const extent& at);
  // The first batch whose max timestamp is >= ts; nullopt when none is.
  result<std::optional<batch_location>> find_timestamp(std::int64_t ts, const extent& at);
  // Calls fn with the header of each batch whose last offset is >= from, in order, and for a control batch its
  // whole bytes (empty for other batches).
  using visitor = std::function<void(const model::batch_header_view&, std::span<const std::byte> control_batch)>;
  result<void> visit(offset from, const extent& at, const visitor& fn);
  // The aborted transactions of txn_index::collect.
  result<void> collect_aborted(offset from, offset upto, std::vector<aborted_txn>& out, bool& complete);

 private:
  segment(io::file_system& fs, const std::filesystem::path& directory, offset base, std::shared_ptr<io::file> log,
          std::shared_ptr<io::file> index, std::shared_ptr<io::file> time, std::int32_t index_bytes, bool active,
          std::string_view file_suffix = {});

  [[nodiscard]] std::filesystem::path path(std::string_view suffix) const;
  [[nodiscard]] std::filesystem::path txn_index_path() const;
  result<void> load();
  // Publishes a batch written at `position` into `extent_` and the indexes. Call with the mutex held.
  result<void> add_batch(const model::batch_header_view& header, std::uint64_t position,
                         std::int32_t index_interval_bytes);
  // Appends a time index entry for the extent's largest timestamp if the index does not have it yet.
  result<void> index_max_timestamp(const extent& e);
  result<void> sync_files();
  void close_index_files();
  // Opens the index files if closed and marks them used; call with the mutex held (or before sharing).
  result<void> open_index_files_locked(io::open_mode mode);
  // The scan of recover(); call with the mutex held.
  result<std::uint64_t> rebuild_locked(std::int32_t index_interval_bytes, offset keep_below);
  // Makes a sealed segment's indexes usable: opens them if closed and, the first time, checks every entry,
  // rebuilding them from the .log if the check fails.
  result<void> indexes_ready();
  // Rebuilds the indexes of a sealed segment from its .log after they failed a check or a lookup.
  result<void> rebuild_sealed_indexes(std::string_view why);
  result<batch_location> locate_once(offset target, const extent& at);
  void touch_indexes() const;

  io::file_system& fs_;
  std::filesystem::path directory_;
  offset base_;
  std::shared_ptr<io::file> log_;
  // Guards extent_, the indexes and whether they are open and checked: readers open, check and rebuild a
  // sealed segment's indexes on demand.
  mutable std::shared_mutex mutex_;
  offset_index offset_index_;
  time_index time_index_;
  txn_index aborted_;
  extent extent_;
  const std::int32_t index_bytes_;
  std::atomic<bool> sealed_{false};
  std::atomic<bool> indexes_open_{true};
  bool indexes_checked_ = false;
  mutable std::atomic<std::int64_t> last_index_use_{0};  // steady_clock ticks
  bool damaged_ = false;
  std::string damage_;                // what recover(keep) found, for the log line of whoever decides about it
  std::atomic<bool> deleted_{false};  // renamed to "*.deleted" by retention
  std::string file_suffix_;           // guarded by mutex_: ".cleaned" or ".swap" while the cleaner swaps it in
  // Writer-only state.
  std::uint64_t bytes_since_index_ = 0;
  std::optional<std::int64_t> rolling_since_ms_;
  bool index_suspect_ = false;
};

}  // namespace ferry::storage
