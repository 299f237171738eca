// Log compaction, the disk_log side of the log cleaner (log_cleaner.h), after Kafka's LogCleaner: a pass maps
// the keys of the log's dirty part to their latest offsets, rewrites the cleanable segments without the records
// those supersede, and swaps the rewritten segments in (file_names.h has the file protocol).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/log.h"
#include "model/batch_builder.h"
#include "model/records.h"
#include "storage/atomic_file.h"
#include "storage/disk_log.h"
#include "storage/file_names.h"
#include "storage/key_offset_map.h"

namespace ferry::storage {
namespace {

// What a compressed stored batch may inflate to; only a damaged one comes near.
constexpr std::size_t max_inflated_bytes = model::max_lookup_record_bytes;

// Reads a segment's batches in order through a buffer of log.cleaner.io.buffer.size bytes, checking each.
class batch_reader {
 public:
  batch_reader(io::file& file, std::uint64_t end, std::size_t buffer_bytes)
      : file_(file), end_(end), buffer_(std::max(buffer_bytes, model::batch_header_size)) {}

  // The next batch, valid until the next call; empty at the end. corrupt_log for a batch that fails its checks.
  result<std::span<const std::byte>> next() {
    if (position_ >= end_) return std::span<const std::byte>{};
    if (!buffered(model::batch_header_size)) {
      FERRY_TRY(fill());
    }
    if (!buffered(model::batch_header_size)) return errc::corrupt_log;
    const std::size_t size = model::peek_batch_size(view(model::batch_header_size));
    if (size == 0 || size > end_ - position_) return errc::corrupt_log;
    std::span<const std::byte> batch;
    if (size > buffer_.size()) {
      large_.resize(size);
      FERRY_TRY(const std::size_t got, file_.read_at(large_, position_));
      if (got != size) return errc::corrupt_log;
      bytes_read_ += got;
      batch = large_;
    } else {
      if (!buffered(size)) {
        FERRY_TRY(fill());
      }
      if (!buffered(size)) return errc::corrupt_log;
      batch = view(size);
    }
    if (model::validate_batch(batch, {.max_batch_bytes = SIZE_MAX, .from_client = false})) return errc::corrupt_log;
    position_ += size;
    return batch;
  }

  [[nodiscard]] std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  [[nodiscard]] bool buffered(std::size_t n) const { return position_ >= start_ && position_ + n <= start_ + length_; }
  [[nodiscard]] std::span<const std::byte> view(std::size_t n) const {
    return {buffer_.data() + (position_ - start_), n};
  }
  result<void> fill() {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), end_ - position_));
    FERRY_TRY(const std::size_t got, file_.read_at({buffer_.data(), want}, position_));
    start_ = position_;
    length_ = got;
    bytes_read_ += got;
    return success();
  }

  io::file& file_;
  std::uint64_t end_;
  std::vector<std::byte> buffer_;
  std::vector<std::byte> large_;  // a batch larger than the buffer
  std::uint64_t start_ = 0;
  std::size_t length_ = 0;
  std::uint64_t position_ = 0;
  std::uint64_t bytes_read_ = 0;
};

std::int64_t saturating_add(std::int64_t a, std::int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

result<void> remove_if_present(io::file_system& fs, const std::filesystem::path& path) {
  auto removed = fs.remove(path);
  if (!removed && removed.error() != std::errc::no_such_file_or_directory) return removed.error();
  return success();
}

// The last offset of the batches in a .log file (trusted: a swap file was fsynced whole); nullopt when empty.
result<std::optional<offset>> last_offset_in(io::file_system& fs, const std::filesystem::path& path) {
  FERRY_TRY(const auto file, fs.open(path, io::open_mode::read_only));
  FERRY_TRY(const std::uint64_t size, file->size());
  std::optional<offset> last;
  std::byte header[model::batch_header_size];
  for (std::uint64_t position = 0; position + model::batch_header_size <= size;) {
    FERRY_TRY(const std::size_t got, file->read_at(header, position));
    const std::size_t batch = model::peek_batch_size(header);
    const model::batch_header_view view(header);
    if (got != sizeof header || batch == 0 || batch > size - position || !view.offsets_fit()) break;
    last = view.last_offset();
    position += batch;
  }
  return last;
}

}  // namespace

result<void> complete_swaps(io::file_system& fs, const std::filesystem::path& directory) {
  FERRY_TRY(const auto names, fs.list(directory));
  bool changed = false;
  for (const auto& name : names) {
    if (!name.ends_with(swap_suffix)) continue;
    const auto base =
        parse_offset_file_name(std::string_view(name).substr(0, name.size() - swap_suffix.size()), log_suffix);
    if (!base) continue;
    FERRY_TRY(const auto last, last_offset_in(fs, directory / name));
    const offset through = std::max(last.value_or(*base), *base);
    for (const auto& other : names) {
      const auto old = parse_offset_file_name(other, log_suffix);
      if (!old || *old < *base || *old > through) continue;
      for (const auto suffix : segment_file_suffixes) {
        FERRY_TRY(remove_if_present(fs, directory / offset_file_name(*old, suffix)));
      }
    }
    FERRY_TRY(fs.rename(directory / name, directory / offset_file_name(*base, log_suffix)));
    // Rebuilt when the segment opens.
    for (const auto suffix : {index_suffix, time_index_suffix}) {
      for (const auto state : {std::string_view{}, cleaned_suffix, swap_suffix}) {
        FERRY_TRY(remove_if_present(fs, directory / (offset_file_name(*base, suffix) + std::string(state))));
      }
    }
    FERRY_LOG(warn, "storage") << directory.string() << ": completed the log cleaner's swap of segment " << *base
                               << " that a stop interrupted";
    changed = true;
  }
  if (changed) {
    FERRY_TRY(fs.sync_directory(directory));
  }
  return success();
}

result<void> disk_log::load_cleaner_state() {
  const auto path = directory_ / cleaner_checkpoint;
  FERRY_TRY(const auto text, read_small_file(*fs_, path));
  if (!text) return success();
  auto decoded = decode_cleaner_state(*text);
  if (!decoded) {
    FERRY_LOG(warn, "storage") << path.string() << " is unreadable; the log cleaner starts over";
    return success();
  }
  cleaner_ = std::move(decoded).value();
  return success();
}

result<void> disk_log::write_cleaner_state() {
  if (auto written = write_file_atomically(*fs_, directory_ / cleaner_checkpoint, encode_cleaner_state(cleaner_));
      !written)
    return io_failed("writing the cleaner checkpoint", written.error());
  return success();
}

disk_log::cleanable_range disk_log::cleanable_range_of(const log_config& config, offset first_dirty,
                                                       std::int64_t now_ms) {
  const auto all = all_segments();
  // Nothing at or past the last stable offset at the high watermark is cleaned (Kafka's KAFKA-13194): a record
  // not yet replicated may be lost in a failover, and must not have removed the committed value it supersedes;
  // whether an open transaction's records count is not decided yet; a marker above the high watermark is not
  // decided either.
  const offset stable = last_stable_offset(offset{high_watermark_.load(std::memory_order_acquire)});
  cleanable_range range;
  range.end = all.back()->base_offset();
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    const auto at = all[i]->committed();
    // min.compaction.lag.ms: a segment whose newest record is younger stays dirty and uncleaned, and so do the
    // ones after it.
    const bool too_young = config.min_compaction_lag_ms > 0 && at.max_timestamp >= 0 &&
                           now_ms - at.max_timestamp < config.min_compaction_lag_ms;
    const bool unstable = at.next_offset > stable;
    if (!all[i]->sealed() || too_young || unstable) {
      range.end = all[i]->base_offset();
      break;
    }
    range.segments.push_back(all[i]);
    range.extents.push_back(at);
  }
  range.first_dirty = std::max(first_dirty, all.front()->base_offset());
  return range;
}

std::optional<cleanable_state> disk_log::cleanable() {
  log_config config;
  {
    std::lock_guard lock(write_mutex_);
    if (closed_) return std::nullopt;
    config = config_;
  }
  if (!config.compact || dir_->offline()) return std::nullopt;
  cleaner_state cleaner;
  {
    std::lock_guard lock(swap_mutex_);
    cleaner = cleaner_;
  }
  const std::int64_t now_ms = clock_.now_ms();
  const auto range = cleanable_range_of(config, cleaner.first_dirty, now_ms);
  cleanable_state state;
  state.min_cleanable_dirty_ratio = config.min_cleanable_dirty_ratio;
  for (std::size_t i = 0; i < range.extents.size(); ++i) {
    const auto& at = range.extents[i];
    if (at.next_offset <= range.first_dirty) {
      state.clean_bytes += at.size;
      // Tombstones whose delete horizon passed make a pass due even without dirty records.
      const auto horizon = cleaner.delete_horizons.find(range.segments[i]->base_offset());
      if (horizon != cleaner.delete_horizons.end() && horizon->second <= now_ms) state.overdue = true;
      continue;
    }
    // The first dirty segment's newest record stands in for its oldest: max.compaction.lag.ms is met within
    // a segment's span, which the roll by max.compaction.lag.ms bounds.
    if (state.dirty_bytes == 0 && at.max_timestamp >= 0 && now_ms - at.max_timestamp > config.max_compaction_lag_ms)
      state.overdue = true;
    state.dirty_bytes += at.size;
  }
  if (state.dirty_bytes == 0 && !state.overdue) return std::nullopt;
  return state;
}

// One pass over one log: map, plan, write, swap. Lives for the pass; the log's cleaning_mutex_ is held.
class disk_log::compaction_pass {
 public:
  compaction_pass(disk_log& log, key_offset_map& map, const log_config& config, cleaner_state state,
                  std::size_t io_buffer_bytes)
      : log_(log),
        map_(map),
        config_(config),
        state_(std::move(state)),
        now_ms_(log.clock_.now_ms()),
        io_buffer_bytes_(io_buffer_bytes),
        range_(log.cleanable_range_of(config, state_.first_dirty, now_ms_)) {}

  result<compaction_result> run() {
    stats_.first_dirty = range_.first_dirty;
    if (range_.first_dirty >= range_.end && !tombstones_expired()) return stats_;
    FERRY_TRY(find_aborted());
    FERRY_TRY(const offset mapped_end, map_dirty_keys());
    plan_groups(mapped_end);
    for (auto& g : groups_) {
      auto written = write_group(g);
      if (!written) {
        discard_cleaned();
        return written.error();
      }
    }
    FERRY_TRY(const bool swapped, swap(mapped_end));
    if (!swapped) return compaction_result{.first_dirty = range_.first_dirty};
    stats_.first_dirty = mapped_end;
    FERRY_LOG(info, "storage") << log_.directory_.string() << ": cleaned " << stats_.segments_replaced
                               << " segments into " << groups_.size() << ", removing " << stats_.records_removed
                               << " records; dirty from offset " << mapped_end;
    return stats_;
  }

 private:
  // A run of old segments (indexes into range_) that becomes one cleaned segment.
  struct group {
    std::size_t first = 0;
    std::size_t last = 0;  // inclusive
    std::shared_ptr<segment> cleaned;
    std::optional<std::int64_t> delete_horizon;  // when the cleaned segment keeps tombstones
  };

  [[nodiscard]] bool dirty(std::size_t i) const { return range_.extents[i].next_offset > range_.first_dirty; }

  // The aborted transactions of the range. Every transaction there has ended (the range stops at the first open
  // one), though its marker may lie past the range.
  result<void> find_aborted() {
    if (range_.segments.empty()) return success();
    FERRY_TRY(const auto aborted, log_.aborted_transactions(range_.segments.front()->base_offset(), range_.end));
    for (const auto& txn : aborted) aborted_[txn.producer].emplace_back(txn.first, txn.last);
    return success();
  }

  // Whether a data batch belongs to an aborted transaction: its records were never visible to read_committed
  // consumers, so they supersede no key and are removed.
  [[nodiscard]] bool aborted(const model::batch_header_view& header) const {
    if (!header.is_transactional() || header.is_control()) return false;
    const auto found = aborted_.find(header.producer());
    if (found == aborted_.end()) return false;
    return std::ranges::any_of(found->second, [&](const auto& txn) {
      return txn.first <= header.base_offset() && header.base_offset() <= txn.second;
    });
  }

  // Whether a cleaned segment holds tombstones that may go now.
  [[nodiscard]] bool tombstones_expired() const {
    for (std::size_t i = 0; i < range_.segments.size(); ++i) {
      const auto horizon = state_.delete_horizons.find(range_.segments[i]->base_offset());
      if (!dirty(i) && horizon != state_.delete_horizons.end() && horizon->second <= now_ms_) return true;
    }
    return false;
  }

  // Puts the keys of the dirty part into the map, as far as they fit; returns the offset the map covers up to.
  result<offset> map_dirty_keys() {
    map_.reset(static_cast<std::uint64_t>(std::max<std::int64_t>(range_.end.value() - range_.first_dirty.value(), 0)));
    offset mapped_end = range_.first_dirty;
    for (std::size_t i = 0; i < range_.segments.size(); ++i) {
      if (!dirty(i)) continue;
      batch_reader reader(*range_.segments[i]->log_file(), range_.extents[i].size, io_buffer_bytes_);
      bool full = false;
      while (!full) {
        FERRY_TRY(const auto batch, reader.next());
        if (batch.empty()) break;
        const model::batch_header_view header(batch);
        if (header.last_offset() < range_.first_dirty) continue;
        if (!header.is_control() && !aborted(header)) {
          FERRY_TRY(
              model::for_each_stored_record(batch, max_inflated_bytes, scratch_, [&](const model::record_view& r) {
                const offset at{header.base_offset().value() + r.offset_delta};
                if (at < range_.first_dirty || !r.key) return true;
                if (map_.put(*r.key, at)) return true;
                full = true;  // this record and the rest stay dirty for the next pass
                mapped_end = at;
                return false;
              }));
        }
        if (!full) mapped_end = next(header.last_offset());
      }
      stats_.bytes_read += reader.bytes_read();
      if (full) return mapped_end;
      mapped_end = std::max(mapped_end, range_.extents[i].next_offset);
    }
    return mapped_end;
  }

  // Groups the segments that hold offsets below `mapped_end` into runs that fit one segment (segment.bytes, and
  // relative offsets in 4 bytes). Clean and dirty segments never share a group: a cleaned segment has one
  // delete horizon, and fresh tombstones must not inherit an old one.
  void plan_groups(offset mapped_end) {
    const auto max_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(config_.segment_bytes, 1));
    std::uint64_t group_bytes = 0;
    for (std::size_t i = 0; i < range_.segments.size() && range_.segments[i]->base_offset() < mapped_end; ++i) {
      const auto& at = range_.extents[i];
      if (!groups_.empty()) {
        group& g = groups_.back();
        const offset base = range_.segments[g.first]->base_offset();
        if (dirty(i) == dirty(g.first) && group_bytes + at.size <= max_bytes &&
            at.next_offset.value() - base.value() - 1 <= INT32_MAX) {
          g.last = i;
          group_bytes += at.size;
          continue;
        }
      }
      groups_.push_back({i, i, nullptr, std::nullopt});
      group_bytes = at.size;
    }
  }

  // The batches of the group's segments, without superseded records, into a new "*.cleaned" segment.
  result<void> write_group(group& g) {
    const offset base = range_.segments[g.first]->base_offset();
    auto created = segment::create(*log_.fs_, log_.directory_, base, config_.segment_index_bytes, cleaned_suffix);
    if (!created) return log_.io_failed("creating a cleaned segment", created.error());
    g.cleaned = std::move(created).value();
    for (std::size_t i = g.first; i <= g.last; ++i) {
      // Tombstones go from a segment an earlier pass cleaned once its delete horizon passed.
      const auto known = state_.delete_horizons.find(range_.segments[i]->base_offset());
      const bool drop_tombstones = !dirty(i) && known != state_.delete_horizons.end() && known->second <= now_ms_;
      const std::int64_t horizon = !dirty(i) && known != state_.delete_horizons.end()
                                       ? known->second
                                       : saturating_add(now_ms_, config_.delete_retention_ms);
      bool kept_tombstone = false;
      batch_reader reader(*range_.segments[i]->log_file(), range_.extents[i].size, io_buffer_bytes_);
      while (true) {
        FERRY_TRY(const auto batch, reader.next());
        if (batch.empty()) break;
        FERRY_TRY(clean_batch(batch, drop_tombstones, *g.cleaned, kept_tombstone));
      }
      stats_.bytes_read += reader.bytes_read();
      if (kept_tombstone) g.delete_horizon = std::max(g.delete_horizon.value_or(horizon), horizon);
    }
    if (auto sealed = g.cleaned->seal(); !sealed) return log_.io_failed("sealing a cleaned segment", sealed.error());
    stats_.bytes_written += g.cleaned->committed().size;
    return success();
  }

  // Writes what `batch` keeps to `out`: all of it verbatim, a rewritten batch with the kept records, or nothing.
  result<void> clean_batch(std::span<const std::byte> batch, bool drop_tombstones, segment& out, bool& kept_tombstone) {
    const model::batch_header_view header(batch);
    if (header.is_control()) return clean_marker(batch, drop_tombstones, out, kept_tombstone);
    const bool in_txn = header.is_transactional();
    if (aborted(header)) {
      stats_.records_removed += static_cast<std::uint64_t>(header.records_count());
      if (!producers_last(header)) return success();
      txn_kept_data_.insert(header.producer());
      FERRY_TRY(const auto emptied, model::retain_records(batch, {}, 0, header.max_timestamp()));
      return append(emptied, out);
    }
    kept_.clear();
    std::int32_t count = 0;
    std::int64_t max_timestamp = -1;
    bool tombstone = false;
    FERRY_TRY(model::for_each_stored_record(batch, max_inflated_bytes, scratch_, [&](const model::record_view& r) {
      const offset at{header.base_offset().value() + r.offset_delta};
      // A keyless record cannot be compacted (Kafka's cleaner drops it too).
      bool keep = r.key.has_value();
      if (keep) {
        const auto latest = map_.get(*r.key);
        keep = !latest || *latest <= at;
      }
      if (keep && !r.value && drop_tombstones) keep = false;
      if (keep) {
        kept_.insert(kept_.end(), r.raw.begin(), r.raw.end());
        ++count;
        max_timestamp = std::max(max_timestamp, header.base_timestamp() + r.timestamp_delta);
        tombstone = tombstone || !r.value;
      }
      return true;
    }));
    stats_.records_removed += static_cast<std::uint64_t>(header.records_count() - count);
    kept_tombstone = kept_tombstone || tombstone;
    if (count == header.records_count()) {
      if (in_txn) txn_kept_data_.insert(header.producer());
      return append(batch, out);
    }
    // Kafka keeps a producer's last batch, emptied, so its sequence survives a reload of the producer state.
    if (count == 0 && !producers_last(header)) return success();
    if (in_txn) txn_kept_data_.insert(header.producer());
    FERRY_TRY(const auto rewritten, model::retain_records(batch, kept_, count, max_timestamp));
    return append(rewritten, out);
  }

  // A transaction marker stays while any batch of its transaction does: without it, a producer state rebuilt from
  // the log would take the transaction for an open one. Once none does, it goes like a tombstone: it counts for
  // the cleaned segment's delete horizon and is removed by the first pass after it.
  result<void> clean_marker(std::span<const std::byte> batch, bool drop_tombstones, segment& out,
                            bool& kept_tombstone) {
    const bool had_data = txn_kept_data_.erase(model::batch_header_view(batch).producer()) > 0;
    if (!had_data && drop_tombstones) {
      ++stats_.records_removed;
      return success();
    }
    if (!had_data) kept_tombstone = true;
    return append(batch, out);
  }

  result<void> append(std::span<const std::byte> batch, segment& out) {
    if (auto written = out.append(batch, config_.index_interval_bytes, now_ms_); !written)
      return log_.io_failed("writing a cleaned segment", written.error());
    return success();
  }

  [[nodiscard]] bool producers_last(const model::batch_header_view& header) const {
    if (header.producer().value() < 0) return false;
    std::lock_guard lock(log_.producers_mutex_);
    const auto entry = log_.producers_.find(header.producer());
    return entry && !entry->batches.empty() && entry->batches.back().last_offset == header.last_offset();
  }

  // The segment list position of the group's old segments, when they are all still there unchanged.
  [[nodiscard]] std::optional<std::size_t> still_there(const group& g) const {
    const auto& list = log_.segments_;
    const auto first = std::find(list.begin(), list.end(), range_.segments[g.first]);
    if (first == list.end()) return std::nullopt;
    const auto at = static_cast<std::size_t>(first - list.begin());
    for (std::size_t i = g.first; i <= g.last; ++i) {
      const std::size_t pos = at + (i - g.first);
      if (pos >= list.size() || list[pos] != range_.segments[i]) return std::nullopt;
      const auto now = list[pos]->committed();
      if (now.size != range_.extents[i].size || now.next_offset != range_.extents[i].next_offset) return std::nullopt;
    }
    return at;
  }

  // The swap of file_names.h. Gives up (false), removing the cleaned files, if retention, truncation or close
  // changed the segments meanwhile.
  result<bool> swap(offset mapped_end) {
    std::lock_guard swap_lock(log_.swap_mutex_);
    {
      std::lock_guard lock(log_.write_mutex_);
      const bool unchanged =
          !log_.closed_ && std::ranges::all_of(groups_, [&](const group& g) { return still_there(g).has_value(); });
      if (!unchanged) {
        discard_cleaned();
        return false;
      }
    }
    for (const auto& g : groups_) {
      if (auto renamed = g.cleaned->rename_files(*log_.fs_, swap_suffix); !renamed) {
        discard_cleaned();
        return log_.io_failed("renaming a cleaned segment", renamed.error());
      }
    }
    // The commit point: from here on, a restart completes the swap.
    if (auto synced = log_.fs_->sync_directory(log_.directory_); !synced)
      return log_.io_failed("syncing the directory", synced.error());
    std::vector<std::shared_ptr<segment>> replaced;
    {
      std::lock_guard lock(log_.write_mutex_);
      std::unique_lock segments_lock(log_.segments_mutex_);
      auto& list = log_.segments_;
      for (auto g = groups_.rbegin(); g != groups_.rend(); ++g) {
        const std::size_t at = *still_there(*g);  // only appends ran since the check
        const auto from = list.begin() + static_cast<std::ptrdiff_t>(at);
        const auto to = from + static_cast<std::ptrdiff_t>(g->last - g->first + 1);
        replaced.insert(replaced.begin(), from, to);
        *from = g->cleaned;
        list.erase(from + 1, to);
      }
    }
    stats_.segments_replaced = replaced.size();
    result<void> outcome = success();
    for (const auto& old : replaced) {
      if (auto renamed = old->rename_to_deleted(*log_.fs_); !renamed && outcome) outcome = renamed;
    }
    for (const auto& g : groups_) {
      if (auto renamed = g.cleaned->rename_files(*log_.fs_, {}); !renamed && outcome) outcome = renamed;
    }
    if (outcome) outcome = log_.fs_->sync_directory(log_.directory_);
    log_.work_.run_after(std::chrono::milliseconds(std::max<std::int64_t>(config_.file_delete_delay_ms, 0)),
                         [replaced, fs = log_.fs_, directory = log_.directory_] {
                           for (const auto& seg : replaced) {
                             if (auto gone = seg->remove_deleted_files(*fs); !gone)
                               FERRY_LOG(warn, "storage")
                                   << "removing cleaned-away segment files of " << directory.string()
                                   << " failed: " << gone.error().message();
                           }
                         });
    if (!outcome) return log_.io_failed("finishing the cleaner's swap", outcome.error());
    record_state(mapped_end);
    FERRY_TRY(log_.write_cleaner_state());
    return true;
  }

  // The cleaner state after the swap: the new first dirty offset, and a delete horizon for each cleaned segment
  // that kept tombstones (entries of segments the log no longer has are dropped).
  void record_state(offset mapped_end) {
    cleaner_state& state = log_.cleaner_;
    state.first_dirty = std::max(state.first_dirty, mapped_end);
    for (const auto& g : groups_) {
      for (std::size_t i = g.first; i <= g.last; ++i) state.delete_horizons.erase(range_.segments[i]->base_offset());
      if (g.delete_horizon) state.delete_horizons[g.cleaned->base_offset()] = *g.delete_horizon;
    }
    const auto current = log_.all_segments();
    std::erase_if(state.delete_horizons, [&](const auto& entry) {
      return std::ranges::none_of(current, [&](const auto& s) { return s->base_offset() == entry.first; });
    });
  }

  // Removes the cleaned files of a pass that gives up.
  void discard_cleaned() {
    for (const auto& g : groups_) {
      if (!g.cleaned) continue;
      for (const auto suffix : segment_file_suffixes) {
        for (const auto state : {cleaned_suffix, swap_suffix})
          (void)remove_if_present(
              *log_.fs_, log_.directory_ / (offset_file_name(g.cleaned->base_offset(), suffix) + std::string(state)));
      }
    }
  }

  disk_log& log_;
  key_offset_map& map_;
  const log_config config_;
  const cleaner_state state_;
  const std::int64_t now_ms_;
  const std::size_t io_buffer_bytes_;
  const cleanable_range range_;
  std::vector<group> groups_;
  compaction_result stats_;
  std::vector<std::byte> scratch_;  // inflated records
  std::vector<std::byte> kept_;     // the kept records of a batch being rewritten
  // The range's aborted transactions by producer: first offset and marker offset.
  std::unordered_map<producer_id, std::vector<std::pair<offset, offset>>> aborted_;
  // Producers whose transaction, since their last marker, has a batch in the cleaned segments.
  std::unordered_set<producer_id> txn_kept_data_;
};

result<compaction_result> disk_log::compact(key_offset_map& map, std::size_t io_buffer_bytes) {
  std::unique_lock pass(cleaning_mutex_, std::try_to_lock);
  if (!pass.owns_lock()) return compaction_result{};
  log_config config;
  {
    std::lock_guard lock(write_mutex_);
    if (closed_) return errc::log_closed;
    config = config_;
  }
  if (!config.compact) return compaction_result{};
  if (dir_->offline()) return offline_error();
  cleaner_state state;
  {
    std::lock_guard lock(swap_mutex_);
    state = cleaner_;
  }
  return compaction_pass(*this, map, config, std::move(state), io_buffer_bytes).run();
}

}  // namespace ferry::storage
