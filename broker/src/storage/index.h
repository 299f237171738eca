#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"
#include "storage/errc.h"

namespace ferry::storage {

// Fixed-size entries stored back to back in a file: the common part of offset_index and time_index.
//
// While its segment is active, the entries are also kept in memory so that lookups on the hot path (tail
// reads) need no I/O. A sealed segment's index drops that copy and lookups read entries from the file (a
// binary search is about log2(entries) small page-cache reads), which keeps memory flat however many
// segments a broker holds.
//
// Entries are written at count * Entry::size, so bytes a failed write left past that point are harmless:
// the next append overwrites them and truncate() cuts them.
//
// Not thread-safe: the owning segment serialises access.
template <typename Entry>
class index_file {
 public:
  // max_bytes: segment.index.bytes, the size at which the index counts as full.
  index_file(std::shared_ptr<io::file> file, std::int32_t max_bytes, bool resident)
      : file_(std::move(file)),
        max_entries_(static_cast<std::size_t>(std::max(max_bytes, 0)) / Entry::size),
        resident_(resident) {}

  // Counts the file's entries and, if resident, reads them into memory. corrupt_log when the file does not
  // hold a whole number of entries.
  result<void> load() {
    FERRY_TRY(const std::uint64_t bytes, file_->size());
    if (bytes % Entry::size != 0) return errc::corrupt_log;
    count_ = bytes / Entry::size;
    entries_.clear();
    if (!resident_) return success();
    std::vector<std::byte> raw(bytes);
    FERRY_TRY(const std::size_t got, file_->read_at(raw, 0));
    if (got != bytes) return errc::corrupt_log;
    entries_.reserve(count_);
    for (std::size_t i = 0; i < count_; ++i) entries_.push_back(Entry::decode(raw.data() + i * Entry::size));
    return success();
  }

  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] bool full() const { return count_ >= max_entries_; }
  [[nodiscard]] bool resident() const { return resident_; }

  result<Entry> at(std::size_t i) const {
    if (resident_) return entries_[i];
    std::byte raw[Entry::size];
    FERRY_TRY(const std::size_t got, file_->read_at(raw, i * Entry::size));
    if (got != Entry::size) return errc::corrupt_log;
    return Entry::decode(raw);
  }

  // The last entry for which `before(entry)` holds, where it holds for a prefix of the entries (the
  // entries are sorted); nullopt when it holds for none.
  template <typename Pred>
  result<std::optional<Entry>> last_where(Pred before) const {
    std::size_t lo = 0;       // entries [0, lo) satisfy `before`
    std::size_t hi = count_;  // entries [hi, count) do not
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      FERRY_TRY(const Entry e, at(mid));
      if (before(e))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == 0) return std::optional<Entry>{};
    FERRY_TRY(const Entry e, at(lo - 1));
    return std::optional<Entry>{e};
  }

  result<std::optional<Entry>> last() const {
    if (count_ == 0) return std::optional<Entry>{};
    FERRY_TRY(const Entry e, at(count_ - 1));
    return std::optional<Entry>{e};
  }

  result<void> append(const Entry& e) {
    std::byte raw[Entry::size];
    e.encode(raw);
    if (auto written = file_->write_at(raw, count_ * Entry::size); !written) {
      (void)file_->truncate(count_ * Entry::size);  // tidy only: the next append overwrites a torn entry
      return written.error();
    }
    if (resident_) entries_.push_back(e);
    ++count_;
    return success();
  }

  // Keeps the first `count` entries and cuts any bytes past them. The entries are dropped even if cutting
  // the file fails: later appends overwrite those bytes.
  result<void> truncate(std::size_t count) {
    count_ = count;
    if (resident_) entries_.resize(count);
    return file_->truncate(count * Entry::size);
  }

  result<void> sync() { return file_->sync(); }

  // A sealed segment's index files are opened when first used and closed when idle (segment.h): without its
  // file the index answers nothing until reopen() gives it one (and load() counts its entries again).
  [[nodiscard]] bool is_open() const { return file_ != nullptr; }
  void close() { file_.reset(); }
  void reopen(std::shared_ptr<io::file> file) { file_ = std::move(file); }

  // Drops the in-memory copy; lookups read the file from now on.
  void release_memory() {
    resident_ = false;
    entries_ = {};
  }

 private:
  std::shared_ptr<io::file> file_;
  std::size_t max_entries_;
  std::size_t count_ = 0;
  bool resident_;
  std::vector<Entry> entries_;
};

// The sparse offset index of a segment (".index"): finds the position in the segment's .log of a batch at
// or before an offset, so a lookup scans at most about index.interval.bytes of batch headers.
//
// File format: 8-byte entries back to back, nothing else, big-endian:
//   0  4  relative offset (int32): base offset of an indexed batch minus the segment's base offset
//   4  4  position (int32): byte position of that batch in the .log file
// Both fields strictly increase from one entry to the next. The segment indexes a batch when more than
// index.interval.bytes were appended since the previously indexed batch started; the first batch
// (position 0) is implied and never stored. There is no checksum: the index is rebuilt from the .log
// after an unclean shutdown or when it fails the checks of load().
class offset_index {
 public:
  struct entry {
    offset base;  // base offset of the batch
    std::uint64_t position;
  };

  // resident: keep the entries in memory (see index_file); index_bytes: segment.index.bytes.
  offset_index(std::shared_ptr<io::file> file, offset segment_base, std::int32_t index_bytes, bool resident)
      : base_(segment_base), file_(std::move(file), index_bytes, resident) {}

  // Loads and checks the index against the segment's .log size: corrupt_log when it cannot be right. A
  // resident index is checked entry by entry; a sealed one only by its size and last entry, as Kafka
  // does, since every lookup re-checks the batch it lands on.
  result<void> load(std::uint64_t log_size);

  // The last entry whose offset is <= target, or the segment start.
  result<entry> lookup(offset target) const;
  // The last entry whose position is <= position, or the segment start.
  result<entry> lookup_position(std::uint64_t position) const;
  // The last entry, or the segment start.
  result<entry> last() const;

  // Checks every entry, reading the whole file once, whether resident or not: for a sealed segment's index on
  // its first use.
  result<void> check_all(std::uint64_t log_size);

  result<void> append(offset batch_base, std::uint64_t position);
  result<void> truncate(std::size_t count) { return file_.truncate(count); }
  result<void> sync() { return file_.sync(); }
  void release_memory() { file_.release_memory(); }
  [[nodiscard]] std::size_t size() const { return file_.size(); }
  [[nodiscard]] bool full() const { return file_.full(); }
  [[nodiscard]] bool resident() const { return file_.resident(); }
  [[nodiscard]] bool is_open() const { return file_.is_open(); }
  void close() { file_.close(); }
  void reopen(std::shared_ptr<io::file> file) { file_.reopen(std::move(file)); }

 private:
  struct raw_entry {
    static constexpr std::size_t size = 8;
    std::int32_t relative_offset;
    std::uint32_t position;
    void encode(std::byte* out) const {
      boost::endian::store_big_s32(reinterpret_cast<unsigned char*>(out), relative_offset);
      boost::endian::store_big_u32(reinterpret_cast<unsigned char*>(out) + 4, position);
    }
    static raw_entry decode(const std::byte* in) {
      return {boost::endian::load_big_s32(reinterpret_cast<const unsigned char*>(in)),
              boost::endian::load_big_u32(reinterpret_cast<const unsigned char*>(in) + 4)};
    }
  };

  [[nodiscard]] entry absolute(const raw_entry& e) const {
    return {offset{base_.value() + e.relative_offset}, e.position};
  }
  result<void> check(const raw_entry& e, const raw_entry* previous, std::uint64_t log_size) const;

  offset base_;
  index_file<raw_entry> file_;
};

// The time index of a segment (".timeindex"): finds where in the segment batches reach a timestamp.
//
// File format: 12-byte entries back to back, nothing else, big-endian:
//   0  8  timestamp (int64): the largest batch max timestamp in the segment up to this entry
//   8  4  relative offset (int32): base offset of the first batch that had that timestamp, minus the
//         segment's base offset
// Timestamps strictly increase and offsets never decrease. The segment adds an entry when it adds an
// offset index entry and the segment's largest timestamp grew since the last time entry, and once more
// when the segment is sealed or closed, so the last entry always holds the segment's largest timestamp.
// So every batch before an entry's offset has a smaller timestamp than the entry. Rebuilt, like the offset
// index, when it looks wrong or after an unclean shutdown.
class time_index {
 public:
  struct entry {
    std::int64_t timestamp;
    offset base;
  };

  time_index(std::shared_ptr<io::file> file, offset segment_base, std::int32_t index_bytes, bool resident)
      : base_(segment_base), file_(std::move(file), index_bytes, resident) {}

  // Loads and checks the index against the segment's next offset, like offset_index::load.
  result<void> load(offset next_offset);

  // The last entry whose timestamp is < ts; nullopt when there is none.
  result<std::optional<entry>> last_before(std::int64_t ts) const;
  result<std::optional<entry>> last() const;

  result<void> check_all(offset next_offset);

  result<void> append(entry e);
  result<void> truncate(std::size_t count) { return file_.truncate(count); }
  result<void> sync() { return file_.sync(); }
  void release_memory() { file_.release_memory(); }
  [[nodiscard]] std::size_t size() const { return file_.size(); }
  [[nodiscard]] bool full() const { return file_.full(); }
  void close() { file_.close(); }
  void reopen(std::shared_ptr<io::file> file) { file_.reopen(std::move(file)); }

 private:
  struct raw_entry {
    static constexpr std::size_t size = 12;
    std::int64_t timestamp;
    std::int32_t relative_offset;
    void encode(std::byte* out) const {
      boost::endian::store_big_s64(reinterpret_cast<unsigned char*>(out), timestamp);
      boost::endian::store_big_s32(reinterpret_cast<unsigned char*>(out) + 8, relative_offset);
    }
    static raw_entry decode(const std::byte* in) {
      return {boost::endian::load_big_s64(reinterpret_cast<const unsigned char*>(in)),
              boost::endian::load_big_s32(reinterpret_cast<const unsigned char*>(in) + 8)};
    }
  };

  [[nodiscard]] entry absolute(const raw_entry& e) const {
    return {e.timestamp, offset{base_.value() + e.relative_offset}};
  }
  result<void> check(const raw_entry& e, const raw_entry* previous, offset next_offset) const;

  offset base_;
  index_file<raw_entry> file_;
};

}  // namespace ferry::storage
