#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "io/file_system.h"
#include "model/control_record.h"
#include "model/ids.h"
#include "storage/errc.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log_config.h"
#include "storage/producer_state.h"
#include "storage/txn_index.h"

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

class key_offset_map;

// How much of a compacted log the cleaner could clean now (log_cleaner.h): the sealed segments from the log
// start up to the first that min.compaction.lag.ms keeps (never the active one), split at the first dirty offset.
struct cleanable_state {
  std::uint64_t clean_bytes = 0;
  std::uint64_t dirty_bytes = 0;
  // max.compaction.lag.ms has passed for the oldest dirty record: cleaned whatever the dirty ratio.
  bool overdue = false;
  double min_cleanable_dirty_ratio = 0.5;  // the log's min.cleanable.dirty.ratio

  [[nodiscard]] double dirty_ratio() const {
    const std::uint64_t total = clean_bytes + dirty_bytes;
    return total == 0 ? 0.0 : static_cast<double>(dirty_bytes) / static_cast<double>(total);
  }
};

// What one cleaning pass did.
struct compaction_result {
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t records_removed = 0;
  std::size_t segments_replaced = 0;
  offset first_dirty;  // where the next pass starts mapping keys
};

struct append_result {
  offset base_offset;
  offset last_offset;
  std::int64_t log_append_time_ms = -1;  // -1 unless the topic uses LogAppendTime
  offset log_start_offset;
  // True when the batch repeated one of the producer's last five batches: nothing was written and the
  // offsets above are the ones the original append got.
  bool duplicate = false;
  // The flush policy (flush.messages) wants the log flushed up to last_offset + 1 now: until flush() has done
  // so, visible_end() stays below this batch, and the caller should not acknowledge it.
  bool flush_required = false;
};

// One partition's log: a directory of segments named by base offset. Appends are serialised by the log's
// one writer lock; reads run concurrently with appends (they see a prefix of the log) and never wait on the
// disk. Flushes run outside the writer lock, so a producer never waits behind another thread's fsync.
//
// Offsets: log start <= visible end <= log end, and flushed (the recovery point) <= log end. A record is
// visible once appended, unless the flush policy wanted it flushed: then only once the flush succeeded.
//
// Failures: a failed fsync, or an I/O error writing, takes the log's dir offline (log_dir.h) and every later
// append, read and flush of any log there fails with errc::log_dir_offline. A write that finds the disk full
// fails and leaves the log as it was.
//
// See segment.h for the files and their formats.
class log {
 public:
  virtual ~log() = default;

  // Appends one client batch that model::validate_batch accepted. Assigns offsets by rewriting the
  // batch's base offset and partition leader epoch in place (the caller's buffer), checks and updates the
  // idempotent producer state, writes the bytes verbatim, updates the indexes and rolls the segment when
  // full or old (the rolled one is sealed in the background). Never fsyncs: when the flush policy wants a
  // flush, flush_required says so and the caller calls flush() off its network thread.
  virtual result<append_result> append(std::span<std::byte> batch, leader_epoch epoch) = 0;
  // The same for a batch a coordinator writes under a producer's id (the group coordinator's transactional
  // offset commits, Kafka's AppendOrigin.COORDINATOR): only the producer epoch is checked, not sequences, and
  // it is never a duplicate.
  virtual result<append_result> append_from_coordinator(std::span<std::byte> batch, leader_epoch epoch) = 0;

  // Transactions (producer_state.h). Appends a transaction marker for `producer` (a leader, on the transaction
  // coordinator's WriteTxnMarkers): it ends the producer's open transaction, and an aborted one goes into the
  // segment's transaction index (txn_index.h). invalid_producer_epoch or coordinator_fenced as producer_state.h
  // says.
  virtual result<append_result> append_marker(producer_id producer, producer_epoch epoch, model::txn_marker marker,
                                              leader_epoch leader) = 0;
  // How far read_committed consumers may read given the partition's high watermark: below the first offset of
  // every transaction still open, or ended by a marker the high watermark has not passed; the high watermark
  // itself when there is none.
  virtual offset last_stable_offset(offset high_watermark) = 0;
  // The aborted transactions that overlap [from, upto), oldest marker first: what a read_committed fetch of
  // that range tells the consumer to drop.
  virtual result<std::vector<aborted_txn>> aborted_transactions(offset from, offset upto) = 0;

  // Batches from the one containing `from` onwards, up to `max_bytes` (but always at least one whole batch
  // if any exists at or after `from`, so consumers make progress past a large batch), never past `upto`
  // (exclusive; the high watermark). offset_out_of_range when `from` is below the log start or above the
  // log end offset. An offset in a gap (offsets a damaged segment lost) reads on from the next batch.
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
  // Every offset below it is on disk (fsynced): Kafka's recovery point.
  [[nodiscard]] virtual offset flushed_offset() const = 0;
  // How far consumers may read as far as this log is concerned: the log end, except while a flush the
  // flush policy asked for is pending, when it is the flushed offset.
  [[nodiscard]] virtual offset visible_end() const = 0;
  [[nodiscard]] virtual std::uint64_t size_bytes() const = 0;
  // Bytes of the batches from the one holding `from` to the log end (all of them below the log start, none at
  // or past the end): how far behind a replica whose log ends at `from` is. May read a sealed segment's index.
  virtual result<std::uint64_t> size_bytes_from(offset from) = 0;
  // Where recovery found damage in flushed data that later records follow (reads go around the hole): the first
  // offset it could not read, until a truncation at or below it; nullopt for a log without such a hole. A
  // follower drops everything from there and fetches it again rather than keep a hole its leader does not have.
  [[nodiscard]] virtual std::optional<offset> damaged_from() const = 0;
  [[nodiscard]] virtual std::size_t segment_count() const = 0;

  // Leader epochs (leader_epoch_cache.h). append() records the epoch it stamps where that epoch starts. A
  // new leader calls begin_epoch first, so the epoch starts at the log end even before its first append
  // (as in Kafka): a follower asking where the previous epoch ended gets that offset at once.
  //
  // The replica's role, which the log checks under its writer lock, so that an append that read the role or
  // the epoch before it got the lock cannot land after a change (review finding 7): after begin_epoch, a leader's
  // append with an older epoch, and any append_replicated, fail with errc::role_changed; after follow(), a
  // leader's append does. A log no partition has given a role yet takes both.
  virtual void begin_epoch(leader_epoch epoch) = 0;
  virtual void follow() = 0;
  // The partition's high watermark (the leader's, or what a follower learned from its leader), which bounds the
  // log's own upkeep: retention removes no segment with records at or past it, so the log start never passes
  // it, and the cleaner cleans nothing past the last stable offset at it (review findings 3 and 6, Kafka's
  // KAFKA-13194). Unbounded until the partition sets it.
  virtual void set_high_watermark(offset high_watermark) = 0;
  [[nodiscard]] virtual epoch_end end_offset_for_epoch(leader_epoch epoch) const = 0;

  // The newest epoch in the log: its last batch's, or a later one a leader began; -1 when none is known.
  [[nodiscard]] virtual leader_epoch latest_epoch() const = 0;

  // Follower side. Appends batches fetched from the leader as they are (offsets, leader epochs, CRCs), with
  // the leader's producer state and epochs: each must be intact and start at the log end
  // (errc::out_of_order_offsets otherwise; the batches before it stay written). base_offset and last_offset
  // of the result span what was written; flush_required as for append().
  virtual result<append_result> append_replicated(std::span<const std::byte> batches) = 0;
  // Removes every batch that ends at or past `end` (a batch that `end` falls inside goes whole), so that the
  // log ends at `end` or just below it; at or below the log start, the log is emptied and starts at `end`.
  // Waits for the log's background work; blocking (it rebuilds the cut segment's indexes): not on a network
  // thread.
  virtual result<void> truncate_to(offset end) = 0;
  // Empties the log and starts it at `start`: a follower whose log end is below the leader's log start.
  // Blocking, like truncate_to.
  virtual result<void> reset_to(offset start) = 0;

  // Idempotent producers' state, as rebuilt from the log; used to answer a retried batch.
  [[nodiscard]] virtual std::optional<producer_entry> producer(producer_id id) const = 0;
  // Every producer the log knows, for DescribeProducers.
  [[nodiscard]] virtual std::vector<std::pair<producer_id, producer_entry>> producers() const = 0;

  virtual void update_config(const log_config& config) = 0;
  // Removes whole segments that retention.ms or retention.bytes no longer keep (never the active one, nor
  // one not yet sealed): they leave the log at once and their files are renamed "*.deleted", then removed
  // after file.delete.delay.ms. Returns how many were removed.
  virtual result<std::size_t> apply_retention() = 0;
  // DeleteRecords (and a follower following its leader's log start): the log starts at `to` from now on (at most
  // the log end; never moves back), whole segments below it are removed as retention removes them, and reads
  // below it are out of range. Returns the log start. The start survives restarts through the
  // log-start-offset-checkpoint (open_options::log_start).
  virtual result<offset> advance_log_start(offset to) = 0;
  // Forgets producers idle for `expiration_ms` by the clock (producer_state.h remove_expired); how many.
  virtual std::size_t expire_producers(std::int64_t expiration_ms) = 0;
  // Log compaction (cleanup.policy=compact), driven by the log_cleaner. nullopt when the log is not compacted
  // or has nothing it could clean.
  [[nodiscard]] virtual std::optional<cleanable_state> cleanable() = 0;
  // One cleaning pass (log_compaction.cc): maps the keys of the dirty part into `map` (as many as fit), rewrites
  // the cleanable segments without the records those keys supersede (and tombstones past their delete
  // horizon), and swaps the result in (file_names.h). Blocking, off the network threads; appends wait only for
  // the segment list to change. Nothing to do, or a pass already running, is an empty result.
  virtual result<compaction_result> compact(key_offset_map& map, std::size_t io_buffer_bytes) = 0;
  // fsyncs everything below `upto` (at least); blocking, and safe to call from several threads.
  virtual result<void> flush(offset upto) = 0;
  // Flushes everything if flush.ms has passed since the last flush.
  virtual result<void> maybe_flush_by_time() = 0;
  // Closes the index files of sealed segments unused since `idle_before`; returns how many segments did.
  virtual std::size_t release_idle_indexes(std::chrono::steady_clock::time_point idle_before) = 0;
  // Waits for the log's background work, flushes, seals the active segment, writes the producer-state
  // snapshot and the leader-epoch-checkpoint, and closes the files. After a clean close the next open skips recovery.
  virtual result<void> close() = 0;
};

class background;
class log_dir_state;

// Opens (or creates) the log in `directory`. If the log was not closed cleanly (see log_manager's clean
// shutdown marker), recovery runs from the recovery point: segments with offsets at or past it are scanned,
// each batch's length and CRC checked, and a torn or damaged tail cut (logged as a warning), with any later
// segments (unflushed as well) removed. The leader epochs come from the leader-epoch-checkpoint up to the
// recovery point and from the batches past it (from every batch when the file is missing or unreadable).
// Below the recovery point nothing is cut: a bad batch there (found
// when an index must be rebuilt) is reported and its segment stays readable up to it, the later ones intact.
struct open_options {
  std::shared_ptr<io::file_system> fs;
  const ferry::clock* clock = nullptr;
  std::filesystem::path directory;
  log_config config;
  bool needs_recovery = false;
  // From the log dir's recovery-point-offset-checkpoint: everything below it was flushed. After a clean
  // shutdown it is the log end (anything past it, such as bytes appended by hand, is cut); unknown after a
  // crash, 0; unknown after a clean shutdown, everything.
  offset recovery_point{INT64_MAX};
  // From the log dir's log-start-offset-checkpoint: where DeleteRecords moved the log start (-1: unknown).
  offset log_start{-1};
  background* work = nullptr;          // nullptr: work runs inline
  std::shared_ptr<log_dir_state> dir;  // nullptr: a dir state of its own
  // Called on the background executor, holding no lock of the log, after a rolled segment was sealed and
  // the flushed offset moved over it, or a truncation moved it back (log_manager writes the recovery-point
  // checkpoint then).
  std::function<void()> on_recovery_point_moved;
};
result<std::shared_ptr<log>> open_log(const open_options& options);

}  // namespace ferry::storage
