#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"
#include "storage/log.h"
#include "storage/log_config.h"
#include "storage/log_dir.h"
#include "storage/offset_checkpoint.h"

namespace ferry::storage {

// Owns every partition log of the broker, spread over one or more log directories (log.dirs):
//
//   <log dir>/<topic>-<partition>/                    a partition's log (log.h)
//   <log dir>/<topic>-<partition>/partition.metadata  the id of the topic the log belongs to (below)
//   <log dir>/<topic>-<partition>.<32 hex>-delete/    a removed log, renamed before its files are deleted
//   <log dir>/<topic>-<partition>.<32 hex>-stray/     a log no assignment names, set aside and kept
//   <log dir>/.ferry-clean-shutdown                   written by a clean shutdown, deleted by the next start
//   <log dir>/.lock                                   flock-ed while a broker uses the dir: never two at once
//   <log dir>/recovery-point-offset-checkpoint        each log's flushed offset (offset_checkpoint.h)
//   <log dir>/replication-offset-checkpoint           each partition's high watermark (written for replication)
//
// partition.metadata is Kafka's format, two lines: "version: 0" and "topic_id: <id>" (the topic id as
// Kafka prints it). A log created for one topic is never taken for another topic of the same name.
//
// Startup reads and deletes each log dir's clean-shutdown marker, so that a crash from then on is noticed
// at the next start, and opens every partition directory, recovering the logs of a dir that had no
// marker. Leftover "-delete" directories are removed; "-stray" ones are left alone and counted (an operator
// decides about them: rename one back to "<topic>-<partition>" to bring it back).
//
// Threading: every method is thread-safe; the partition map is guarded by a shared mutex, held shared by
// get() and only briefly by the rest. Logs are handed out as shared_ptr, so a log removed while a request
// holds it stays valid: reads of its (unlinked) files still work and appends fail with log_closed.
class log_manager {
 public:
  static constexpr std::string_view clean_shutdown_marker = ".ferry-clean-shutdown";

  struct options {
    std::shared_ptr<io::file_system> fs;
    const ferry::clock* clock = nullptr;
    std::vector<std::filesystem::path> log_dirs;
    // The config for a log found at startup, by topic name (nullptr: log_config defaults). create() or
    // log::update_config change it later.
    std::function<log_config(const std::string& topic)> topic_config;
    // Where logs do their background disk work; nullptr: inline.
    background* work = nullptr;
  };

  // Opens the log dirs (creating missing ones) and every partition log in them.
  static result<std::unique_ptr<log_manager>> open(options opts);

  log_manager(const log_manager&) = delete;
  log_manager& operator=(const log_manager&) = delete;

  // nullptr when the partition has no log here.
  [[nodiscard]] std::shared_ptr<log> get(const topic_partition& tp) const;
  // The partition's log, created in the log dir holding the fewest partitions if there is none yet. An
  // existing log takes `config`. `topic_id` (empty: unknown) is recorded in a new log's partition.metadata,
  // and in an existing log that has none; an existing log of another topic id is errc::topic_id_mismatch.
  result<std::shared_ptr<log>> create(const topic_partition& tp, const log_config& config,
                                      const std::string& topic_id = {});
  // The topic id a log was created for; empty when unknown or when there is no log.
  [[nodiscard]] std::string topic_id(const topic_partition& tp) const;
  // Closes the partition's log and deletes its directory (renamed to "<dir>.<unique>-delete" first, as
  // Kafka does, so a crash halfway leaves nothing that looks like a live log). Nothing when there is no log.
  result<void> remove(const topic_partition& tp);
  // Closes the partition's log and renames its directory to "<dir>.<unique>-stray", where it stays, unread,
  // until an operator deals with it: for a log that no assignment names any more without anyone having asked
  // for its deletion. Nothing when there is no log.
  result<void> set_aside(const topic_partition& tp);
  // How many "-stray" directories the log dirs hold.
  [[nodiscard]] std::size_t stray_logs() const { return stray_logs_.load(); }
  // Every partition with a log here, sorted.
  [[nodiscard]] std::vector<topic_partition> partitions() const;

  // Runs log::apply_retention on every log; returns how many segments were deleted in all. A failing log
  // is logged and skipped; the first error is returned after all logs had their turn.
  result<std::size_t> apply_retention_all();
  // Runs log::maybe_flush_by_time on every log, with errors handled as in apply_retention_all.
  result<void> flush_all_by_time();
  // Closes every log and then writes the clean-shutdown marker of each log dir whose logs all closed.
  result<void> shutdown();

  // Writes each dir's recovery-point-offset-checkpoint (the logs' flushed offsets). The broker does so every
  // log.flush.offset.checkpoint.interval.ms and at shutdown, and checkpoint_recovery_point_moved after each sealed
  // segment; after a crash, recovery starts from there.
  result<void> checkpoint_recovery_points();
  // Writes `name` (a checkpoint file, offset_checkpoint.h) into every online log dir with the entries of the
  // partitions that live there.
  result<void> write_checkpoint(std::string_view name, const offset_map& offsets);
  // The entries of `name` in every log dir as read at startup (a missing or unreadable file adds none).
  [[nodiscard]] offset_map read_checkpoint(std::string_view name) const;

  // Every partition with a log here, with the index of its log dir in dirs().
  [[nodiscard]] std::vector<std::pair<topic_partition, std::size_t>> placements() const;
  // The log dirs' health (offline, full, free space), in log.dirs order.
  [[nodiscard]] const std::vector<std::shared_ptr<log_dir_state>>& dirs() const { return dirs_; }
  // Measures each dir's free space (statvfs), which also sets or clears its full flag.
  void refresh_free_space();
  // Closes sealed segments' index files that were not used for segment::idle_index_close.
  std::size_t release_idle_indexes();

 private:
  struct entry {
    std::shared_ptr<log> partition_log;
    std::size_t dir;  // index into options_.log_dirs
    std::string topic_id;
  };

  explicit log_manager(options opts) : options_(std::move(opts)) {}

  result<void> open_dir(std::size_t dir);
  // create() for a partition without a log; mutex_ is held.
  result<std::shared_ptr<log>> create_locked(const topic_partition& tp, const log_config& config,
                                             const std::string& topic_id);
  [[nodiscard]] log_config config_for(const std::string& topic) const;
  [[nodiscard]] std::vector<std::pair<topic_partition, entry>> snapshot() const;
  // Closes the log and renames its directory to "<dir>.<unique><suffix>"; false when there was no log.
  result<std::optional<std::filesystem::path>> detach(const topic_partition& tp, std::string_view suffix);

  const options options_;
  std::vector<std::shared_ptr<log_dir_state>> dirs_;
  std::vector<std::shared_ptr<io::file>> locks_;  // one per dir, held for the manager's life
  // A sealed segment moved a log's flushed offset up, or a truncation moved it down: write the recovery-point
  // checkpoint now rather than at the next periodic write, so a crash soon after a large produce recovers only
  // the active segments, and one after a truncation never trusts flushed data the truncation cut (Kafka's
  // truncateTo checkpoints at once). Coalesced: requests that arrive while one thread writes make it write once
  // more, not once each.
  void checkpoint_recovery_point_moved();

  mutable std::shared_mutex mutex_;
  std::atomic<std::uint64_t> seal_checkpoint_requests_{0};
  std::mutex checkpoint_write_mutex_;                // one writer of the checkpoint files at a time
  std::unordered_map<topic_partition, entry> logs_;  // guarded by mutex_
  std::atomic<std::size_t> stray_logs_{0};
};

}  // namespace ferry::storage
