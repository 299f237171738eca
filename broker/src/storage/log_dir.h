#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>

namespace ferry::storage {

// The health of one log dir (an entry of log.dirs), shared by the logs in it.
//
// Offline: a failed fsync (or an I/O error writing data) means the kernel may have dropped pages it said it
// had, and a later fsync can report success anyway ("fsyncgate"). So the first such failure takes the whole
// dir offline for the rest of the process's life, as Kafka does: its logs refuse appends and reads
// (KAFKA_STORAGE_ERROR), /v1/ready says why, and a restart recovers from what reached the disk.
//
// Full: a write that failed for lack of space, or free space below full_below_bytes. Writes keep failing
// safely (nothing is acknowledged that was not written); the state is logged once per episode, exported,
// and cleared when space comes back (refresh_free_bytes).
//
// Thread-safe.
class log_dir_state {
 public:
  static constexpr std::uint64_t full_below_bytes = std::uint64_t{1024} * 1024;

  explicit log_dir_state(std::filesystem::path path) : path_(std::move(path)) {}

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  [[nodiscard]] bool offline() const { return offline_.load(std::memory_order_acquire); }
  [[nodiscard]] std::string offline_reason() const;
  // Takes the dir offline; the first reason is kept and logged, later ones are not.
  void take_offline(const std::string& what, std::error_code ec);
  // Called once, on the thread that took the dir offline (which may hold a log's locks: it must only hand the
  // news on). Set before the dir is used.
  void on_offline(std::function<void()> notify) { notify_offline_ = std::move(notify); }

  [[nodiscard]] bool full() const { return full_.load(std::memory_order_acquire); }
  [[nodiscard]] std::uint64_t free_bytes() const { return free_bytes_.load(std::memory_order_relaxed); }
  // A write failed with ENOSPC.
  void note_no_space(const std::string& what);
  // The file system's free space, as measured now.
  void refresh_free_bytes(std::uint64_t free);
  // The file system's size (UINT64_MAX until measured), so free space can be seen as a share of it.
  [[nodiscard]] std::uint64_t total_bytes() const { return total_bytes_.load(std::memory_order_relaxed); }
  void refresh_total_bytes(std::uint64_t total) { total_bytes_.store(total, std::memory_order_relaxed); }

  // Sorts an I/O error from a file of this dir: ENOSPC marks the dir full, EIO and EROFS take it offline.
  // Returns `ec`.
  std::error_code note_io_error(const std::string& what, std::error_code ec);

 private:
  void set_full(bool full, const std::string& why);

  const std::filesystem::path path_;
  std::atomic<bool> offline_{false};
  std::atomic<bool> full_{false};
  std::atomic<std::uint64_t> free_bytes_{UINT64_MAX};
  std::atomic<std::uint64_t> total_bytes_{UINT64_MAX};
  mutable std::mutex mutex_;
  std::string offline_reason_;  // guarded by mutex_
  std::function<void()> notify_offline_;
};

}  // namespace ferry::storage
