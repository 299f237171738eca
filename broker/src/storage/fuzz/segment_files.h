#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "model/ids.h"
#include "model/record_batch.h"
#include "storage/file_names.h"

namespace ferry::storage::fuzz {

// The input of segment_recovery_fuzz: the files of one partition directory, packed as records back to back:
//
//   0  1  tag: bits 0-1 the file (0 .log, 1 .index, 2 .timeindex; 3 is skipped), bits 2-3 the segment (0-3),
//         bit 4 (on a .log record) recompute the CRC of every whole batch of that .log once it is complete
//   1  2  length n (uint16, big-endian)
//   3  n  bytes appended to that file; a record the input cuts short keeps what is there
//
// A record of length 0 creates the file empty. A segment's files are named by the base offset in the first 8
// bytes of its .log, as a real segment's are (its first batch starts at its base offset), or by the segment's
// number when the .log is shorter or that offset negative; a segment whose name an earlier one took is
// dropped. Bit 4 lets mutations of checksummed bytes (timestamps, counts, records) get past the CRC check.
struct segment_files {
  std::optional<std::string> log;
  std::optional<std::string> index;
  std::optional<std::string> time_index;
  bool fix_crcs = false;
};

inline constexpr std::size_t max_segments = 4;

enum class file_kind : std::uint8_t { log = 0, index = 1, time_index = 2 };

inline std::array<segment_files, max_segments> unpack(std::span<const std::uint8_t> input) {
  std::array<segment_files, max_segments> out;
  std::size_t at = 0;
  while (input.size() - at >= 3) {
    const std::uint8_t tag = input[at];
    const std::size_t length = boost::endian::load_big_u16(input.data() + at + 1);
    at += 3;
    const std::size_t taken = std::min(length, input.size() - at);
    const std::string bytes(reinterpret_cast<const char*>(input.data() + at), taken);
    at += taken;
    segment_files& seg = out[(tag >> 2) & 3];
    std::optional<std::string>* file = nullptr;
    switch (tag & 3) {
      case 0:
        file = &seg.log;
        if ((tag & 0x10) != 0) seg.fix_crcs = true;
        break;
      case 1:
        file = &seg.index;
        break;
      case 2:
        file = &seg.time_index;
        break;
      default:
        continue;
    }
    if (!*file) file->emplace();
    **file += bytes;
  }
  return out;
}

inline std::string pack_record(file_kind kind, std::size_t segment, std::string_view bytes, bool fix_crcs = false) {
  std::string out;
  do {
    const std::size_t n = std::min<std::size_t>(bytes.size(), UINT16_MAX);
    out += static_cast<char>(static_cast<std::uint8_t>(kind) | (segment << 2) | (fix_crcs ? 0x10 : 0));
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(n & 0xFF);
    out += bytes.substr(0, n);
    bytes.remove_prefix(n);
  } while (!bytes.empty());
  return out;
}

// Sets the CRC of every whole batch in `log` to what its bytes say.
inline void fix_batch_crcs(std::string& log) {
  auto* raw = reinterpret_cast<std::byte*>(log.data());
  const std::span<std::byte> bytes(raw, log.size());
  std::size_t at = 0;
  while (bytes.size() - at >= model::batch_header_size) {
    const std::size_t size = model::peek_batch_size(bytes.subspan(at));
    if (size == 0 || size > bytes.size() - at) break;
    boost::endian::store_big_u32(reinterpret_cast<unsigned char*>(raw + at + 17),
                                 bytes::crc32c(bytes.subspan(at + 21, size - 21)));
    at += size;
  }
}

// Writes the segments into `directory` (which exists); returns the base offsets of those with a .log,
// ascending.
inline std::vector<offset> write_segments(std::array<segment_files, max_segments> segments,
                                          const std::filesystem::path& directory) {
  std::vector<offset> taken;
  std::vector<offset> bases;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    segment_files& seg = segments[i];
    if (!seg.log && !seg.index && !seg.time_index) continue;
    offset base{static_cast<std::int64_t>(i)};
    if (seg.log && seg.log->size() >= 8) {
      const std::int64_t named = boost::endian::load_big_s64(reinterpret_cast<const unsigned char*>(seg.log->data()));
      if (named >= 0) base = offset{named};
    }
    if (std::find(taken.begin(), taken.end(), base) != taken.end()) continue;
    taken.push_back(base);
    if (seg.log && seg.fix_crcs) fix_batch_crcs(*seg.log);
    const std::pair<const std::optional<std::string>*, std::string_view> files[] = {
        {&seg.log, log_suffix}, {&seg.index, index_suffix}, {&seg.time_index, time_index_suffix}};
    for (const auto& [content, suffix] : files) {
      if (*content) std::ofstream(directory / offset_file_name(base, suffix), std::ios::binary) << **content;
    }
    if (seg.log) bases.push_back(base);
  }
  std::sort(bases.begin(), bases.end());
  return bases;
}

}  // namespace ferry::storage::fuzz
