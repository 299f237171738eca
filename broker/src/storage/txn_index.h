#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"

namespace ferry::storage {

// A transaction that ended with an abort marker (Kafka's AbortedTxn): what a read_committed fetch tells the
// consumer, so that it drops the transaction's records.
struct aborted_txn {
  producer_id producer;
  offset first;        // the transaction's first offset
  offset last;         // its abort marker's offset
  offset last_stable;  // the partition's last stable offset once the marker was written

  bool operator==(const aborted_txn&) const = default;
};

// The aborted transactions whose markers one segment holds, in marker order: the segment's "<base>.txnindex"
// (file_names.h), Kafka's transaction index. The file exists only once a segment has an aborted transaction.
// Format: entries of 34 bytes, back to back, big-endian:
//   0   2  version (int16) = 0
//   2   8  producer id (int64)
//  10   8  first offset (int64)
//  18   8  last offset (int64): the abort marker's
//  26   8  last stable offset (int64)
// A crash can leave a torn last entry: loading drops it (the log's recovery writes it again from the marker).
//
// The entries are read into memory on first use (34 bytes on disk and 32 in memory per aborted transaction)
// and appended to in place. Thread-safe: the segment's writer appends while fetches collect.
class txn_index {
 public:
  static constexpr std::size_t entry_size = 34;

  // Adds an entry for a marker past every entry's (written at the end of `path`, created if missing).
  result<void> append(io::file_system& fs, const std::filesystem::path& path, const aborted_txn& txn);
  // Entries whose transaction overlaps [from, upto): last >= from and first < upto. `complete` becomes true
  // when an entry's last stable offset reaches `upto`: no later segment can hold a transaction that does.
  result<void> collect(io::file_system& fs, const std::filesystem::path& path, offset from, offset upto,
                       std::vector<aborted_txn>& out, bool& complete);
  // Drops the entries whose marker is at or past `from` (a truncation, or a replay that writes them again).
  result<void> remove_from(io::file_system& fs, const std::filesystem::path& path, offset from);
  // fdatasync of the file if entries were appended since the last one.
  result<void> sync();

  // The file's entries; corrupt_log for an entry of an unknown version. A torn last entry is left out.
  static result<std::vector<aborted_txn>> decode(std::span<const std::byte> bytes);
  static std::vector<std::byte> encode(const aborted_txn& txn);

 private:
  result<void> load_locked(io::file_system& fs, const std::filesystem::path& path);

  std::mutex mutex_;
  bool loaded_ = false;
  std::vector<aborted_txn> entries_;
  std::shared_ptr<io::file> file_;  // open once appended to
  bool dirty_ = false;
};

}  // namespace ferry::storage
