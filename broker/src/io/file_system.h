#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace ferry::io {

// Files come through these two small interfaces so tests can inject failures (faulty_file_system) under the
// storage layer. Errors are std::error_code values from errno (std::system_category).

class file {
 public:
  virtual ~file() = default;
  // Reads up to out.size() bytes at `position`; fewer only at end of file.
  virtual result<std::size_t> read_at(std::span<std::byte> out, std::uint64_t position) = 0;
  // Writes all of `data` at `position`.
  virtual result<void> write_at(std::span<const std::byte> data, std::uint64_t position) = 0;
  virtual result<void> sync() = 0;
  virtual result<void> truncate(std::uint64_t size) = 0;
  virtual result<std::uint64_t> size() = 0;
  // An exclusive advisory lock (flock) held until the file is closed; errc::resource_unavailable_try_again
  // when another process holds it.
  virtual result<void> try_lock() = 0;
  // The OS descriptor, for sendfile(2) and mmap(2). Valid while the file object lives.
  [[nodiscard]] virtual int native_handle() const = 0;
};

enum class open_mode {
  read_only,
  read_write,         // must exist
  create_read_write,  // created if missing
};

class file_system {
 public:
  virtual ~file_system() = default;
  virtual result<std::shared_ptr<file>> open(const std::filesystem::path& path, open_mode mode) = 0;
  virtual result<void> remove(const std::filesystem::path& path) = 0;
  virtual result<void> remove_all(const std::filesystem::path& path) = 0;
  virtual result<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  virtual result<void> create_directories(const std::filesystem::path& path) = 0;
  virtual result<bool> exists(const std::filesystem::path& path) = 0;
  // Names (not paths) of the entries in a directory, sorted.
  virtual result<std::vector<std::string>> list(const std::filesystem::path& directory) = 0;
  // Makes a directory's entries (creations, renames, removals) durable.
  virtual result<void> sync_directory(const std::filesystem::path& directory) = 0;
  // Bytes an unprivileged writer may still use on the file system holding `path` (statvfs f_bavail).
  virtual result<std::uint64_t> free_bytes(const std::filesystem::path& path) = 0;
  // The size of the file system holding `path` (statvfs f_blocks), for free space as a share of it.
  virtual result<std::uint64_t> total_bytes(const std::filesystem::path& path) = 0;
};

// The real file system.
std::shared_ptr<file_system> posix_file_system();

}  // namespace ferry::io
