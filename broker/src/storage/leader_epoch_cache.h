#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/ids.h"

namespace ferry::storage {

// Where each leader epoch starts in a partition's log (KIP-101): the first offset a leader of that epoch
// appended. Followers ask the leader for the end of their last epoch (OffsetForLeaderEpoch, or Fetch's
// diverging epoch) and truncate to it, and consumers check their position the same way after a leader
// change (KIP-320).
struct epoch_entry {
  leader_epoch epoch;
  offset start;
  friend bool operator==(const epoch_entry&, const epoch_entry&) = default;
};

// The answer to "where does epoch E end": the largest epoch at or below E that this log knows, and the start
// of the next higher epoch (the log end offset for the latest epoch). Both -1 when the log cannot say.
struct epoch_end {
  leader_epoch epoch{-1};
  offset end{-1};
  friend bool operator==(const epoch_end&, const epoch_end&) = default;
};

// The epochs of one log, in Kafka's LeaderEpochFileCache semantics. Entries increase strictly in both epoch
// and start offset. Not thread-safe: the log guards it.
class leader_epoch_cache {
 public:
  leader_epoch_cache() = default;
  // `entries` must increase strictly in both fields (decode_leader_epoch_checkpoint checks that).
  explicit leader_epoch_cache(std::vector<epoch_entry> entries) : entries_(std::move(entries)) {}

  // Records that `epoch` starts at `start`. Nothing changes when it is the latest epoch already and starts
  // no later. Otherwise every entry that would break the order (an epoch at or above `epoch`, or a start at
  // or past `start`) goes first. Returns whether anything changed.
  bool assign(leader_epoch epoch, offset start);
  // Removes the epochs that start at or past `end` (the log was truncated to `end`).
  bool truncate_from_end(offset end);
  // The log now starts at `start`: epochs that start at or below it go, except the last of them, which now
  // starts at `start`.
  bool truncate_from_start(offset start);

  [[nodiscard]] epoch_end end_offset_for(leader_epoch requested, offset log_end) const;
  [[nodiscard]] std::optional<leader_epoch> latest_epoch() const;
  [[nodiscard]] std::span<const epoch_entry> entries() const { return entries_; }

 private:
  std::vector<epoch_entry> entries_;
};

// The leader-epoch-checkpoint file of a partition directory, as Kafka writes it (LeaderEpochCheckpointFile):
//
//   0          the format version
//   2          the number of entries
//   0 0        epoch, start offset: one line each, both increasing
//   3 1500
//
// Replaced whole with write_file_atomically. The log writes it before its flushed offset passes an epoch's
// start, so after a crash it knows every epoch below the recovery point; recovery finds the rest in the
// batches it scans.
inline constexpr std::string_view leader_epoch_checkpoint = "leader-epoch-checkpoint";

[[nodiscard]] std::string encode_leader_epoch_checkpoint(std::span<const epoch_entry> entries);
// errc::corrupt_log when the text is not a version-0 checkpoint with as many entries as it says, each
// non-negative and above the one before in both fields.
[[nodiscard]] result<std::vector<epoch_entry>> decode_leader_epoch_checkpoint(std::string_view text);

}  // namespace ferry::storage
