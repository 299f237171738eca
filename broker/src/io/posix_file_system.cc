#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io/file_system.h"

namespace ferry::io {
namespace {

std::error_code last_error() { return {errno, std::system_category()}; }

class posix_file final : public file {
 public:
  explicit posix_file(int fd) : fd_(fd) {}
  ~posix_file() override { ::close(fd_); }
  posix_file(const posix_file&) = delete;
  posix_file& operator=(const posix_file&) = delete;

  result<std::size_t> read_at(std::span<std::byte> out, std::uint64_t position) override {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(position + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return last_error();
      }
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  result<void> write_at(std::span<const std::byte> data, std::uint64_t position) override {
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(position + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return last_error();
      }
      done += static_cast<std::size_t>(n);
    }
    return success();
  }

  result<void> sync() override {
    if (::fdatasync(fd_) != 0) return last_error();
    return success();
  }

  result<void> truncate(std::uint64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return last_error();
    return success();
  }

  result<std::uint64_t> size() override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return last_error();
    return static_cast<std::uint64_t>(st.st_size);
  }

  result<void> try_lock() override {
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) return last_error();
    return success();
  }

  [[nodiscard]] int native_handle() const override { return fd_; }

 private:
  int fd_;
};

class posix final : public file_system {
 public:
  result<std::shared_ptr<file>> open(const std::filesystem::path& path, open_mode mode) override {
    int flags = O_CLOEXEC;
    switch (mode) {
      case open_mode::read_only:
        flags |= O_RDONLY;
        break;
      case open_mode::read_write:
        flags |= O_RDWR;
        break;
      case open_mode::create_read_write:
        flags |= O_RDWR | O_CREAT;
        break;
    }
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return last_error();
    return std::shared_ptr<file>(std::make_shared<posix_file>(fd));
  }

  result<void> remove(const std::filesystem::path& path) override {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (ec) return ec;
    return success();
  }

  result<void> remove_all(const std::filesystem::path& path) override {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec) return ec;
    return success();
  }

  result<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    std::error_code ec;
    std::filesystem::rename(from, to, ec);
    if (ec) return ec;
    return success();
  }

  result<void> create_directories(const std::filesystem::path& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return ec;
    return success();
  }

  result<bool> exists(const std::filesystem::path& path) override {
    std::error_code ec;
    const bool found = std::filesystem::exists(path, ec);
    if (ec) return ec;
    return found;
  }

  result<std::vector<std::string>> list(const std::filesystem::path& directory) override {
    std::error_code ec;
    std::vector<std::string> names;
    for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    if (ec) return ec;
    std::sort(names.begin(), names.end());
    return names;
  }

  result<std::uint64_t> free_bytes(const std::filesystem::path& path) override {
    struct statvfs fs {};
    if (::statvfs(path.c_str(), &fs) != 0) return last_error();
    return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  }

  result<std::uint64_t> total_bytes(const std::filesystem::path& path) override {
    struct statvfs fs {};
    if (::statvfs(path.c_str(), &fs) != 0) return last_error();
    return static_cast<std::uint64_t>(fs.f_blocks) * fs.f_frsize;
  }

  result<void> sync_directory(const std::filesystem::path& directory) override {
    const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return last_error();
    const int rc = ::fsync(fd);
    const std::error_code ec = rc != 0 ? last_error() : std::error_code{};
    ::close(fd);
    if (ec) return ec;
    return success();
  }
};

}  // namespace

std::shared_ptr<file_system> posix_file_system() { return std::make_shared<posix>(); }

}  // namespace ferry::io
