#include "storage/index.h"

namespace ferry::storage {
namespace {

// Loads an index and runs `check(entry, previous)` over the entries worth checking: all of them when the
// index is resident (reading them costs nothing more), else only the last one.
template <typename Entry, typename Check>
result<void> load_checked(index_file<Entry>& file, Check check, bool every_entry = false) {
  FERRY_TRY(file.load());
  const std::size_t count = file.size();
  std::optional<Entry> previous;
  for (std::size_t i = file.resident() || every_entry || count == 0 ? 0 : count - 1; i < count; ++i) {
    FERRY_TRY(const Entry e, file.at(i));
    FERRY_TRY(check(e, previous ? &*previous : nullptr));
    previous = e;
  }
  return success();
}

}  // namespace

result<void> offset_index::check(const raw_entry& e, const raw_entry* previous, std::uint64_t log_size) const {
  // A segment named near INT64_MAX must not take the entry's absolute offset past it.
  if (e.relative_offset < 0 || e.relative_offset > INT64_MAX - base_.value() || e.position >= log_size)
    return errc::corrupt_log;
  if (previous && (e.relative_offset <= previous->relative_offset || e.position <= previous->position))
    return errc::corrupt_log;
  return success();
}

result<void> offset_index::load(std::uint64_t log_size) {
  return load_checked(file_,
                      [&](const raw_entry& e, const raw_entry* previous) { return check(e, previous, log_size); });
}

result<void> offset_index::check_all(std::uint64_t log_size) {
  return load_checked(
      file_, [&](const raw_entry& e, const raw_entry* previous) { return check(e, previous, log_size); }, true);
}

result<offset_index::entry> offset_index::lookup(offset target) const {
  const std::int64_t relative = target.value() - base_.value();
  FERRY_TRY(const auto found, file_.last_where([&](const raw_entry& e) { return e.relative_offset <= relative; }));
  return found ? absolute(*found) : entry{base_, 0};
}

result<offset_index::entry> offset_index::lookup_position(std::uint64_t position) const {
  FERRY_TRY(const auto found, file_.last_where([&](const raw_entry& e) { return e.position <= position; }));
  return found ? absolute(*found) : entry{base_, 0};
}

result<offset_index::entry> offset_index::last() const {
  FERRY_TRY(const auto found, file_.last());
  return found ? absolute(*found) : entry{base_, 0};
}

result<void> offset_index::append(offset batch_base, std::uint64_t position) {
  return file_.append(
      {static_cast<std::int32_t>(batch_base.value() - base_.value()), static_cast<std::uint32_t>(position)});
}

result<void> time_index::check(const raw_entry& e, const raw_entry* previous, offset next_offset) const {
  // Compared without adding to the base, which a segment named near INT64_MAX would overflow.
  if (e.relative_offset < 0 || e.relative_offset >= next_offset.value() - base_.value()) return errc::corrupt_log;
  if (previous && (e.timestamp <= previous->timestamp || e.relative_offset < previous->relative_offset))
    return errc::corrupt_log;
  return success();
}

result<void> time_index::load(offset next_offset) {
  return load_checked(file_,
                      [&](const raw_entry& e, const raw_entry* previous) { return check(e, previous, next_offset); });
}

result<void> time_index::check_all(offset next_offset) {
  return load_checked(
      file_, [&](const raw_entry& e, const raw_entry* previous) { return check(e, previous, next_offset); }, true);
}

result<std::optional<time_index::entry>> time_index::last_before(std::int64_t ts) const {
  FERRY_TRY(const auto found, file_.last_where([&](const raw_entry& e) { return e.timestamp < ts; }));
  if (!found) return std::optional<entry>{};
  return std::optional<entry>{absolute(*found)};
}

result<std::optional<time_index::entry>> time_index::last() const {
  FERRY_TRY(const auto found, file_.last());
  if (!found) return std::optional<entry>{};
  return std::optional<entry>{absolute(*found)};
}

result<void> time_index::append(entry e) {
  return file_.append({e.timestamp, static_cast<std::int32_t>(e.base.value() - base_.value())});
}

}  // namespace ferry::storage
