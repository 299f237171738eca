#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "base/result.h"
#include "io/file_system.h"

namespace ferry::storage {

// Replaces the file at `path` with `content` so that a crash leaves either the old file or the new one, never
// a torn mix: the bytes go to "<path>.tmp", which is fsynced, renamed over `path`, and then the directory is
// fsynced so the rename itself survives a power cut. For checkpoints, snapshots and partition metadata.
result<void> write_file_atomically(io::file_system& fs, const std::filesystem::path& path,
                                   std::span<const std::byte> content);
result<void> write_file_atomically(io::file_system& fs, const std::filesystem::path& path, std::string_view content);

// The whole content of a small file; nullopt when it does not exist.
result<std::optional<std::string>> read_small_file(io::file_system& fs, const std::filesystem::path& path);

// The suffix of write_file_atomically's temporary files; a leftover one is from a crash and is removed.
inline constexpr std::string_view temporary_suffix = ".tmp";

}  // namespace ferry::storage
