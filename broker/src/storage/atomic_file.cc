#include "storage/atomic_file.h"

namespace ferry::storage {

result<void> write_file_atomically(io::file_system& fs, const std::filesystem::path& path,
                                   std::span<const std::byte> content) {
  auto temporary = path;
  temporary += temporary_suffix;
  {
    FERRY_TRY(auto file, fs.open(temporary, io::open_mode::create_read_write));
    FERRY_TRY(file->truncate(0));
    FERRY_TRY(file->write_at(content, 0));
    FERRY_TRY(file->sync());
  }
  FERRY_TRY(fs.rename(temporary, path));
  return fs.sync_directory(path.parent_path());
}

result<void> write_file_atomically(io::file_system& fs, const std::filesystem::path& path, std::string_view content) {
  return write_file_atomically(fs, path, std::as_bytes(std::span(content.data(), content.size())));
}

result<std::optional<std::string>> read_small_file(io::file_system& fs, const std::filesystem::path& path) {
  FERRY_TRY(const bool present, fs.exists(path));
  if (!present) return std::optional<std::string>{};
  FERRY_TRY(auto file, fs.open(path, io::open_mode::read_only));
  FERRY_TRY(const std::uint64_t size, file->size());
  std::string content(size, '\0');
  FERRY_TRY(const std::size_t got, file->read_at(std::as_writable_bytes(std::span(content.data(), content.size())), 0));
  content.resize(got);
  return std::optional<std::string>(std::move(content));
}

}  // namespace ferry::storage
