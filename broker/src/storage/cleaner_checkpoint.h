#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/ids.h"

namespace ferry::storage {

// A compacted log's cleaner state, kept in its directory as "cleaner-checkpoint" (file_names.h):
//  - first_dirty: the offsets below it were cleaned with every key that follows up to there; the next pass
//    maps keys from here on (Kafka's cleaner-offset-checkpoint entry);
//  - delete_horizons: for each cleaned segment (by base offset) still holding tombstones, the wall-clock time
//    (ms) after which its tombstones may go: when the first pass that met them ran, plus delete.retention.ms,
//    so that a consumer reading the log within delete.retention.ms of a pass sees every deletion.
// Written atomically after each swap. A missing or unreadable file means nothing was cleaned: the whole log is
// dirty, which costs a pass and keeps tombstones longer, never shorter. Text, one item per line:
//   0                       version
//   <first dirty offset>
//   <n>                     number of horizons, then n lines of
//   <segment base> <ms>
struct cleaner_state {
  offset first_dirty{0};
  std::map<offset, std::int64_t> delete_horizons;

  bool operator==(const cleaner_state&) const = default;
};

[[nodiscard]] std::string encode_cleaner_state(const cleaner_state& state);
// nullopt for text encode_cleaner_state did not write.
[[nodiscard]] std::optional<cleaner_state> decode_cleaner_state(std::string_view text);

}  // namespace ferry::storage
