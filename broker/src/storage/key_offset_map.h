#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/ids.h"

namespace ferry::storage {

// The log cleaner's map from key to the offset of its latest record, Kafka's SkimpyOffsetMap: an open-addressing
// table of 16-byte key digests (MD5, as Kafka uses) and 8-byte offsets, so memory does not depend on key sizes.
// It holds at most memory_bytes / entry_bytes slots (log.cleaner.dedupe.buffer.size divided among the cleaner
// threads) and is filled to load_factor of the slots a pass asked for: a log with more keys is cleaned in
// several passes. Slots are allocated as passes need them, never past the budget, and kept for later passes.
//
// Not thread-safe: each cleaner thread has its own.
class key_offset_map {
 public:
  static constexpr std::size_t entry_bytes = 24;
  static constexpr double load_factor = 0.9;  // Kafka's log.cleaner.io.buffer.load.factor

  explicit key_offset_map(std::size_t memory_bytes)
      : max_slots_(std::max<std::size_t>(memory_bytes / entry_bytes, 2)) {}

  // Empties the map for a pass that will put at most `keys` keys (an upper bound such as the offsets it covers).
  void reset(std::uint64_t keys);
  // Records `o` as the latest offset of `key`; false, recording nothing, when the key is new and the pass's
  // share of the map is full.
  [[nodiscard]] bool put(std::span<const std::byte> key, offset o);
  [[nodiscard]] std::optional<offset> get(std::span<const std::byte> key) const;
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  using digest = std::array<std::byte, 16>;
  struct slot {
    digest key{};
    std::int64_t value = -1;  // -1: empty
  };
  static digest hash(std::span<const std::byte> key);
  // The slot holding `d`, or the empty one where it belongs.
  [[nodiscard]] std::size_t find(const digest& d) const;

  std::size_t max_slots_;
  std::vector<slot> slots_;  // the slots this pass uses (and the memory of earlier, larger passes)
  std::size_t used_slots_ = 0;
  std::size_t limit_ = 0;
  std::size_t size_ = 0;
};

}  // namespace ferry::storage
