#pragma once

#include <atomic>
#include <cerrno>
#include <memory>
#include <string>

#include "io/file_system.h"

namespace ferry::io {

// Wraps a real file system and fails operations on demand, for tests of how the storage layer handles
// disk errors. Thread-safe: the switches are atomics a test flips while the code under test runs.
class faulty_file_system final : public file_system {
 public:
  explicit faulty_file_system(std::shared_ptr<file_system> inner) : inner_(std::move(inner)) {}

  // Writes fail (with write_errno: EIO, or ENOSPC for a full disk) once this many more bytes have been
  // written (a negative value never fails). A write that crosses the limit writes the bytes before it first:
  // a torn write.
  std::atomic<std::int64_t> fail_writes_after_bytes{-1};
  std::atomic<int> write_errno{EIO};
  // fsync and fdatasync of files and directories fail with EIO.
  std::atomic<bool> fail_sync{false};
  std::atomic<bool> fail_open{false};
  // What free_bytes() answers; negative: the real file system's answer.
  std::atomic<std::int64_t> free_bytes_override{-1};
  // What total_bytes() answers; negative: the real file system's answer.
  std::atomic<std::int64_t> total_bytes_override{-1};

  result<std::shared_ptr<file>> open(const std::filesystem::path& path, open_mode mode) override;
  result<void> remove(const std::filesystem::path& path) override { return inner_->remove(path); }
  result<void> remove_all(const std::filesystem::path& path) override { return inner_->remove_all(path); }
  result<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    return inner_->rename(from, to);
  }
  result<void> create_directories(const std::filesystem::path& path) override {
    return inner_->create_directories(path);
  }
  result<bool> exists(const std::filesystem::path& path) override { return inner_->exists(path); }
  result<std::vector<std::string>> list(const std::filesystem::path& directory) override {
    return inner_->list(directory);
  }
  result<void> sync_directory(const std::filesystem::path& directory) override {
    if (fail_sync.load()) return std::error_code(EIO, std::system_category());
    return inner_->sync_directory(directory);
  }
  result<std::uint64_t> free_bytes(const std::filesystem::path& path) override {
    const std::int64_t forced = free_bytes_override.load();
    if (forced >= 0) return static_cast<std::uint64_t>(forced);
    return inner_->free_bytes(path);
  }
  result<std::uint64_t> total_bytes(const std::filesystem::path& path) override {
    const std::int64_t forced = total_bytes_override.load();
    if (forced >= 0) return static_cast<std::uint64_t>(forced);
    return inner_->total_bytes(path);
  }

 private:
  std::shared_ptr<file_system> inner_;
};

}  // namespace ferry::io
