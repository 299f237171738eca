#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/record_batch.h"
#include "storage/log.h"

namespace ferry::storage::testing {

// A directory of its own for the running test, removed afterwards.
class temp_dir {
 public:
  temp_dir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests
    path_ = std::filesystem::temp_directory_path() / ("ferry-storage-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() { std::filesystem::remove_all(path_); }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A slice's bytes, read with pread(2) on its descriptor as sendfile(2) would.
inline std::vector<std::byte> read_slice(const file_slice& slice) {
  std::vector<std::byte> out(slice.length);
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(slice.file->native_handle(), out.data() + done, out.size() - done,
                              static_cast<off_t>(slice.position + done));
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

inline std::vector<std::byte> read_all(const read_result& result) {
  std::vector<std::byte> out;
  for (const auto& slice : result.slices) {
    const auto bytes = read_slice(slice);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

// The batches in `bytes`, which must be whole batches back to back.
inline std::vector<std::vector<std::byte>> split_batches(std::span<const std::byte> bytes) {
  std::vector<std::vector<std::byte>> out;
  while (!bytes.empty()) {
    const std::size_t size = model::peek_batch_size(bytes);
    if (size == 0 || size > bytes.size()) {
      ADD_FAILURE() << "a partial batch of " << bytes.size() << " bytes";
      break;
    }
    out.emplace_back(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    bytes = bytes.subspan(size);
  }
  return out;
}

// The base offsets of the batches a read returned, checking each batch is whole and valid.
inline std::vector<std::int64_t> base_offsets(const read_result& result) {
  std::vector<std::int64_t> out;
  const auto bytes = read_all(result);
  EXPECT_EQ(bytes.size(), result.total_bytes);
  for (const auto& batch : split_batches(bytes)) {
    EXPECT_FALSE(model::validate_batch(batch, {.max_batch_bytes = SIZE_MAX, .from_client = false}));
    out.push_back(model::batch_header_view(batch).base_offset().value());
  }
  return out;
}

inline std::uint64_t file_size(const std::filesystem::path& path) { return std::filesystem::file_size(path); }

// A log dir with nothing in it but the ".lock" file a log_manager holds.
inline bool holds_only_its_lock(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename() != ".lock") return false;
  return true;
}

inline void append_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::app) << bytes;
}

// Flips one byte of a file in place.
inline void flip_byte(const std::filesystem::path& path, std::uint64_t position) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(static_cast<std::streamoff>(position));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(position));
  f.put(static_cast<char>(c ^ 0x5A));
}

}  // namespace ferry::storage::testing
