#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "storage/background.h"
#include "storage/cleaner_checkpoint.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log.h"
#include "storage/log_dir.h"
#include "storage/producer_state.h"
#include "storage/segment.h"

// The one implementation of storage::log, shared by log.cc (opening, the leader's appends, reads, flushes,
// retention) and log_follower.cc (a follower's appends and truncation). Not for use outside storage/.
namespace ferry::storage {

// The partition log: a directory of segments (segment.h) plus producer-state snapshots (producer_state.h).
//
// Threading:
//  - Writers (append, roll, apply_retention's choice of segments, update_config, close) take write_mutex_,
//    from any thread. Nothing under it waits for the disk: page-cache writes only.
//  - Flushes take flush_mutex_ (one fsync at a time per log) and never write_mutex_: they fsync the segments
//    holding unflushed data and then move flushed_.
//  - Readers never take either. They copy the segment pointers they need under a shared lock on
//    segments_mutex_ and read the files without locks, each segment below its committed extent. Offsets are
//    atomics, stored after the data they cover is published.
//  - Background work (sealing a rolled segment, removing deleted files) holds a weak reference, and close()
//    waits until none is running or queued.
//  - Compaction (log_compaction.cc) runs one pass at a time (cleaning_mutex_) and reads sealed segments without
//    locks. Its swap, retention, truncation and close change which sealed segments the log has: each holds
//    swap_mutex_ (taken before write_mutex_) for that, so the swap finds the segments it cleaned unchanged or
//    gives up. Appends wait only for the segment list's replacement under write_mutex_.
class disk_log final : public log, public std::enable_shared_from_this<disk_log> {
 public:
  disk_log(const open_options& options, std::vector<std::shared_ptr<segment>> segments, offset flushed)
      : fs_(options.fs),
        clock_(*options.clock),
        directory_(options.directory),
        work_(options.work != nullptr ? *options.work : inline_work_),
        dir_(options.dir ? options.dir : std::make_shared<log_dir_state>(options.directory.parent_path())),
        on_recovery_point_moved_(options.on_recovery_point_moved),
        compact_(options.config.compact),
        config_(options.config),
        segments_(std::move(segments)),
        log_start_(segments_.front()->base_offset().value()),
        log_end_(segments_.back()->committed().next_offset.value()),
        flushed_(std::min(flushed, offset{log_end_.load()}).value()),
        last_flush_(clock_.steady_now().time_since_epoch().count()),
        flush_ms_(options.config.flush_ms),
        flush_messages_(options.config.flush_messages) {}

  result<void> load_producer_state();
  result<void> load_cleaner_state();
  // trusted_below: where the checkpoint file stops being trusted (the recovery point after a crash).
  result<void> load_leader_epochs(offset trusted_below);

  result<append_result> append(std::span<std::byte> batch, leader_epoch epoch) override;
  result<append_result> append_from_coordinator(std::span<std::byte> batch, leader_epoch epoch) override;
  result<append_result> append_marker(producer_id producer, producer_epoch epoch, model::txn_marker marker,
                                      leader_epoch leader) override;
  offset last_stable_offset(offset high_watermark) override;
  result<std::vector<aborted_txn>> aborted_transactions(offset from, offset upto) override;
  result<read_result> read(offset from, std::uint64_t max_bytes, offset upto) override;
  result<std::optional<timestamp_match>> offset_for_timestamp(std::int64_t ts) override;
  std::optional<timestamp_match> max_timestamp() override;

  [[nodiscard]] offset log_start_offset() const override { return offset{log_start_.load(std::memory_order_acquire)}; }
  [[nodiscard]] offset log_end_offset() const override { return offset{log_end_.load(std::memory_order_acquire)}; }
  [[nodiscard]] offset flushed_offset() const override { return offset{flushed_.load(std::memory_order_acquire)}; }
  [[nodiscard]] offset visible_end() const override;
  [[nodiscard]] std::uint64_t size_bytes() const override;
  result<std::uint64_t> size_bytes_from(offset from) override;
  [[nodiscard]] std::optional<offset> damaged_from() const override {
    // Retention may have removed the hole since.
    const auto from = damaged_from_.load();
    return from < 0 || from < log_start_offset().value() ? std::nullopt : std::optional<offset>(offset{from});
  }
  // Set by open_log when recovery left a hole (damaged_from()).
  void note_damage(offset from) { damaged_from_.store(from.value()); }
  [[nodiscard]] std::size_t segment_count() const override;
  [[nodiscard]] std::optional<producer_entry> producer(producer_id id) const override;
  [[nodiscard]] std::vector<std::pair<producer_id, producer_entry>> producers() const override;
  void begin_epoch(leader_epoch epoch) override;
  void follow() override;
  void set_high_watermark(offset high_watermark) override {
    high_watermark_.store(high_watermark.value(), std::memory_order_release);
  }
  [[nodiscard]] epoch_end end_offset_for_epoch(leader_epoch epoch) const override;
  [[nodiscard]] leader_epoch latest_epoch() const override {
    return leader_epoch{latest_epoch_.load(std::memory_order_relaxed)};
  }
  result<append_result> append_replicated(std::span<const std::byte> batches) override;
  result<void> truncate_to(offset end) override { return truncate(end, false); }
  result<void> reset_to(offset start) override { return truncate(start, true); }

  std::optional<cleanable_state> cleanable() override;
  result<compaction_result> compact(key_offset_map& map, std::size_t io_buffer_bytes) override;
  void update_config(const log_config& config) override;
  result<std::size_t> apply_retention() override;
  result<offset> advance_log_start(offset to) override;
  std::size_t expire_producers(std::int64_t expiration_ms) override;
  result<void> flush(offset upto) override;
  result<void> maybe_flush_by_time() override;
  std::size_t release_idle_indexes(std::chrono::steady_clock::time_point idle_before) override;
  result<void> close() override;

 private:
  class compaction_pass;
  // The sealed segments compaction may touch now: from the log start up to the first one min.compaction.lag.ms
  // keeps, never the active one.
  struct cleanable_range {
    std::vector<std::shared_ptr<segment>> segments;
    std::vector<segment::extent> extents;
    offset first_dirty;  // at or above the log start
    offset end;          // the first offset not in `segments`
  };
  [[nodiscard]] cleanable_range cleanable_range_of(const log_config& config, offset first_dirty, std::int64_t now_ms);
  // Writes cleaner_ to the cleaner checkpoint. Call with swap_mutex_ held.
  result<void> write_cleaner_state();
  // Refuses a batch with a keyless record when the log is compacted: the cleaner could not keep it.
  [[nodiscard]] std::error_code check_keys(std::span<const std::byte> batch) const;

  // The segment holding offset o (the last one whose base is <= o); nullptr if o is below the log.
  // Call with segments_mutex_ held.
  [[nodiscard]] std::shared_ptr<segment> segment_for(offset o) const;
  // The segment after `s`, nullptr for the last. Call with segments_mutex_ held.
  [[nodiscard]] std::shared_ptr<segment> segment_after(const segment& s) const;
  [[nodiscard]] std::vector<std::shared_ptr<segment>> all_segments() const;
  // The write of append(), for a batch whose checks passed: assigns its offsets and leader epoch, rolls if need be,
  // writes it to the active segment and moves the log end. The producer state is the caller's. Call with
  // write_mutex_ held.
  result<append_result> append_checked(std::span<std::byte> batch, leader_epoch epoch, bool from_coordinator);
  result<append_result> write_locked(std::span<std::byte> batch, leader_epoch epoch);
  // Records a marker batch appended or replayed in `holder`: the producer state, and an aborted transaction's
  // index entry. Call with producers_mutex_ held.
  result<void> note_marker(const model::batch_header_view& header, std::span<const std::byte> batch, segment& holder);
  result<void> maybe_roll(std::uint64_t batch_size, offset last);
  result<void> roll();
  // Background half of a roll: seals `rolled`, makes the new segment's directory entry durable, writes the
  // producer snapshot taken at the roll, and moves the flushed offset on.
  void seal_rolled(const std::shared_ptr<segment>& rolled, std::vector<std::byte> snapshot, offset at);
  // Moves flushed_ over sealed segments that follow it.
  void advance_flushed_over_sealed();
  result<void> write_snapshot(offset at, std::span<const std::byte> bytes);
  // Removes snapshot files whose offset is outside [from, to].
  result<void> remove_snapshots_outside(offset from, offset to);
  // Waits until no background work of the log runs or is queued.
  void wait_for_background();
  // truncate_to (reset: reset_to).
  result<void> truncate(offset end, bool reset);
  // truncate_to's cut of the segment that holds `end`, and removal of the later ones; returns the new end.
  // Call with write_mutex_ and flush_mutex_ held.
  result<offset> cut_segments_at(offset end);
  // Replaces the empty active segment with one based at `base`, past the log end. Call with write_mutex_ held.
  result<void> rebase_empty_active(offset base);
  // Removes every segment and starts an empty one at `start`. Call with write_mutex_ and flush_mutex_ held.
  result<void> restart_at(offset start);
  // Rebuilds the producer state from the snapshots and batches below the log end, after a truncation.
  result<void> reload_producer_state();
  // Records that `epoch` starts at `start` in the epoch cache.
  void record_epoch(leader_epoch epoch, offset start);
  // Writes the leader-epoch-checkpoint if the cache changed since the last write. Call with flush_mutex_
  // held, before flushed_ moves: the file must know every epoch that starts below the flushed offset.
  result<void> write_epoch_checkpoint();
  // Runs `work` through the background executor, counted so that close() can wait for it.
  void in_background(std::function<void(disk_log&)> work);
  // Takes the first `count` segments out of the log (never the active one), moves the log start to `start` (or
  // the new first segment), and deletes their files after file.delete.delay.ms. Holds swap_mutex_.
  result<void> remove_first_segments(std::size_t count, offset start, std::int64_t delete_delay_ms,
                                     std::string_view why);
  // An I/O error on this log's files: the dir decides what it means (full, offline).
  std::error_code io_failed(const std::string& what, std::error_code ec) const {
    return dir_->note_io_error(what + " in " + directory_.string(), ec);
  }
  [[nodiscard]] std::error_code offline_error() const;

  const std::shared_ptr<io::file_system> fs_;
  const ferry::clock& clock_;
  const std::filesystem::path directory_;
  inline_background inline_work_;
  background& work_;
  const std::shared_ptr<log_dir_state> dir_;
  const std::function<void()> on_recovery_point_moved_;

  // Held while sealed segments leave or change (compaction's swap, retention, truncation, close); taken before
  // write_mutex_. Never held for long: the cleaner does its reading and writing outside it.
  std::mutex swap_mutex_;
  cleaner_state cleaner_;             // guarded by swap_mutex_
  std::mutex cleaning_mutex_;         // one compaction pass at a time
  std::atomic<bool> compact_{false};  // config_.compact, for appends' key check outside the lock

  std::mutex write_mutex_;
  log_config config_;    // guarded by write_mutex_
  bool closed_ = false;  // guarded by write_mutex_
  enum class role { unset, leading, following };
  role role_ = role::unset;  // guarded by write_mutex_
  std::atomic<std::int64_t> high_watermark_{INT64_MAX};

  mutable std::shared_mutex segments_mutex_;
  // Ascending base offsets, never empty; the last one is active. Changed only by writers, under both
  // locks, so writers read it without the shared lock.
  std::vector<std::shared_ptr<segment>> segments_;
  std::atomic<std::int64_t> log_start_;
  std::atomic<std::int64_t> log_end_;
  std::atomic<std::int64_t> damaged_from_{-1};  // damaged_from(), -1 for none
  // Everything below it is fsynced. Moved by flushes and background seals, under flush_mutex_.
  std::atomic<std::int64_t> flushed_;
  // The end of the last batch whose append asked for a flush; nothing at or past flushed_ is visible while
  // it is above flushed_.
  std::atomic<std::int64_t> flush_owed_{0};
  std::atomic<std::int64_t> last_flush_;  // steady_clock ticks of the last successful flush
  std::atomic<std::int64_t> flush_ms_;
  std::atomic<std::int64_t> flush_messages_;
  std::mutex flush_mutex_;
  // A new segment's directory entry is not yet fsynced: a flush must do it before it counts.
  std::atomic<bool> directory_dirty_{false};

  mutable std::mutex producers_mutex_;
  producer_state_manager producers_;  // guarded by producers_mutex_
  // Whether the log has held a transactional batch, and an aborted transaction, since it opened (or on disk):
  // until then its last stable offset is the high watermark and no fetch needs the transaction indexes, so a
  // fetch of a partition without transactions takes no lock for either. Set before the batch is written; never
  // cleared.
  std::atomic<bool> has_transactions_{false};
  std::atomic<bool> has_aborted_{false};

  mutable std::mutex epochs_mutex_;
  leader_epoch_cache epochs_;  // guarded by epochs_mutex_
  bool epochs_dirty_ = false;  // guarded by epochs_mutex_: the checkpoint file lags behind epochs_
  // The cache's latest epoch, so that an append in the same epoch takes no lock for it.
  std::atomic<std::int32_t> latest_epoch_{-1};

  std::mutex background_mutex_;
  std::condition_variable background_done_;
  std::size_t background_pending_ = 0;  // guarded by background_mutex_
};

// Startup's part of the log cleaner's swap (file_names.h): completes every swap whose "<base>.log.swap" exists.
// The leftover "*.cleaned" and "*.swap" files are the caller's to remove.
result<void> complete_swaps(io::file_system& fs, const std::filesystem::path& directory);

}  // namespace ferry::storage
