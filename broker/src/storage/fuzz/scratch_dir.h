#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace ferry::storage::fuzz {

// The directory a file-based fuzz target works in: one per process (named by the target and the pid, so
// parallel fuzzing jobs and a replay test do not meet), emptied before every input and removed at exit. It is
// on tmpfs when the machine has /dev/shm, since the code under test fsyncs its files on every input and an
// fsync there costs nothing.
class scratch_dir {
 public:
  explicit scratch_dir(std::string_view target) {
    std::error_code ec;
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path();
    path_ = base / ("ferry-" + std::string(target) + "-" + std::to_string(::getpid()));
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  // Empties the directory (creating it the first time) and returns it.
  const std::filesystem::path& reset() {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    return path_;
  }

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ferry::storage::fuzz
