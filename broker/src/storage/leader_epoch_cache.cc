#include "storage/leader_epoch_cache.h"

#include <algorithm>

#include "storage/checkpoint_text.h"
#include "storage/errc.h"

namespace ferry::storage {

bool leader_epoch_cache::assign(leader_epoch epoch, offset start) {
  if (epoch.value() < 0 || start.value() < 0) return false;
  if (!entries_.empty() && entries_.back().epoch == epoch && entries_.back().start <= start) return false;
  std::erase_if(entries_, [&](const epoch_entry& e) { return e.epoch >= epoch || e.start >= start; });
  entries_.push_back({epoch, start});
  return true;
}

bool leader_epoch_cache::truncate_from_end(offset end) {
  return std::erase_if(entries_, [&](const epoch_entry& e) { return e.start >= end; }) > 0;
}

bool leader_epoch_cache::truncate_from_start(offset start) {
  // The entries are sorted, so those starting at or below `start` are a prefix.
  const auto after =
      std::find_if(entries_.begin(), entries_.end(), [&](const epoch_entry& e) { return e.start > start; });
  if (after == entries_.begin()) return false;
  const leader_epoch survivor = std::prev(after)->epoch;
  if (std::prev(after) == entries_.begin() && entries_.front().start == start) return false;
  entries_.erase(entries_.begin(), std::prev(after));
  entries_.front() = {survivor, start};
  return true;
}

epoch_end leader_epoch_cache::end_offset_for(leader_epoch requested, offset log_end) const {
  if (requested.value() < 0 || entries_.empty()) return {};
  // The latest epoch is the one being written to: it ends at the log end.
  if (entries_.back().epoch == requested) return {requested, log_end};
  const auto higher = std::upper_bound(entries_.begin(), entries_.end(), requested,
                                       [](leader_epoch value, const epoch_entry& e) { return value < e.epoch; });
  // Newer than any epoch known here (the latest is always the largest, so only a confused caller asks).
  if (higher == entries_.end()) return {};
  // Older than every epoch known here: the log cannot tell where it ended, only that the first known epoch
  // starts later (the entries before it went with retention).
  if (higher == entries_.begin()) return {requested, higher->start};
  return {std::prev(higher)->epoch, higher->start};
}

std::optional<leader_epoch> leader_epoch_cache::latest_epoch() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back().epoch;
}

std::string encode_leader_epoch_checkpoint(std::span<const epoch_entry> entries) {
  std::string out = "0\n" + std::to_string(entries.size()) + "\n";
  for (const auto& e : entries) {
    out += std::to_string(e.epoch.value());
    out += ' ';
    out += std::to_string(e.start.value());
    out += '\n';
  }
  return out;
}

result<std::vector<epoch_entry>> decode_leader_epoch_checkpoint(std::string_view text) {
  using checkpoint_text::next_line;
  using checkpoint_text::parse;
  std::string_view line;
  std::int32_t version = -1;
  if (!next_line(text, line) || !parse(line, version) || version != 0) return errc::corrupt_log;
  std::int64_t count = -1;
  if (!next_line(text, line) || !parse(line, count) || count < 0) return errc::corrupt_log;
  std::vector<epoch_entry> out;
  for (std::int64_t i = 0; i < count; ++i) {
    if (!next_line(text, line)) return errc::corrupt_log;
    const auto space = line.find(' ');
    if (space == std::string_view::npos) return errc::corrupt_log;
    std::int32_t epoch = -1;
    std::int64_t start = -1;
    if (!parse(line.substr(0, space), epoch) || epoch < 0 || !parse(line.substr(space + 1), start) || start < 0)
      return errc::corrupt_log;
    if (!out.empty() && (out.back().epoch.value() >= epoch || out.back().start.value() >= start))
      return errc::corrupt_log;
    out.push_back({leader_epoch{epoch}, offset{start}});
  }
  if (next_line(text, line) && !line.empty()) return errc::corrupt_log;
  return out;
}

}  // namespace ferry::storage
