#include "storage/log.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <shared_mutex>

#include "base/log.h"
#include "model/records.h"
#include "storage/atomic_file.h"
#include "storage/file_names.h"
#include "storage/segment.h"

namespace ferry::storage {
namespace {

// The partition log: a directory of segments (segment.h) plus producer-state snapshots (producer_state.h).
//
// Threading:
//  - Writers (append, roll, apply_retention, flush, maybe_flush_by_time, close, update_config) take
//    write_mutex_, so they may come from any thread; flushes hold it while they fsync.
//  - Readers (read, offset_for_timestamp, max_timestamp, log_*_offset, size_bytes, segment_count,
//    producer) never take it. They copy the segment pointers they need under a shared lock on
//    segments_mutex_ and then read the files without locks, each segment below its committed extent. The
//    log end and start offsets are atomics, stored after the data they cover is published.
//  - A segment removed by retention stays alive (files open, unlinked) while a reader or a file_slice
//    holds it.
class disk_log final : public log {
 public:
  disk_log(const open_options& options, std::vector<std::shared_ptr<segment>> segments)
      : fs_(options.fs),
        clock_(*options.clock),
        directory_(options.directory),
        config_(options.config),
        segments_(std::move(segments)),
        log_start_(segments_.front()->base_offset().value()),
        log_end_(segments_.back()->committed().next_offset.value()),
        last_flush_(clock_.steady_now()) {}

  result<void> load_producer_state();

  result<append_result> append(std::span<std::byte> batch, leader_epoch epoch) override;
  result<read_result> read(offset from, std::uint64_t max_bytes, offset upto) override;
  result<std::optional<timestamp_match>> offset_for_timestamp(std::int64_t ts) override;
  std::optional<timestamp_match> max_timestamp() override;

  [[nodiscard]] offset log_start_offset() const override { return offset{log_start_.load(std::memory_order_acquire)}; }
  [[nodiscard]] offset log_end_offset() const override { return offset{log_end_.load(std::memory_order_acquire)}; }
  [[nodiscard]] std::uint64_t size_bytes() const override;
  [[nodiscard]] std::size_t segment_count() const override;
  [[nodiscard]] std::optional<producer_entry> producer(producer_id id) const override;

  void update_config(const log_config& config) override;
  result<std::size_t> apply_retention() override;
  result<void> maybe_flush_by_time() override;
  result<void> flush() override;
  result<void> close() override;

 private:
  // The segment holding offset o (the last one whose base is <= o); nullptr if o is below the log.
  // Call with segments_mutex_ held.
  [[nodiscard]] std::shared_ptr<segment> segment_for(offset o) const;
  [[nodiscard]] std::vector<std::shared_ptr<segment>> all_segments() const;
  result<void> maybe_roll(std::uint64_t batch_size, offset last);
  result<void> roll();
  result<void> flush_locked();
  result<void> write_snapshot(offset at);
  // Removes snapshot files whose offset is outside [from, to].
  result<void> remove_snapshots_outside(offset from, offset to);

  const std::shared_ptr<io::file_system> fs_;
  const ferry::clock& clock_;
  const std::filesystem::path directory_;

  std::mutex write_mutex_;
  log_config config_;                    // guarded by write_mutex_
  std::int64_t unflushed_messages_ = 0;  // guarded by write_mutex_
  bool closed_ = false;                  // guarded by write_mutex_

  mutable std::shared_mutex segments_mutex_;
  // Ascending base offsets, never empty; the last one is active. Changed only by writers, under both
  // locks, so writers read it without the shared lock.
  std::vector<std::shared_ptr<segment>> segments_;
  std::atomic<std::int64_t> log_start_;
  std::atomic<std::int64_t> log_end_;
  std::chrono::steady_clock::time_point last_flush_;  // guarded by write_mutex_

  mutable std::mutex producers_mutex_;
  producer_state_manager producers_;  // guarded by producers_mutex_
};

std::shared_ptr<segment> disk_log::segment_for(offset o) const {
  const auto after = std::upper_bound(segments_.begin(), segments_.end(), o,
                                      [](offset value, const auto& s) { return value < s->base_offset(); });
  return after == segments_.begin() ? nullptr : *std::prev(after);
}

std::vector<std::shared_ptr<segment>> disk_log::all_segments() const {
  std::shared_lock lock(segments_mutex_);
  return segments_;
}

result<append_result> disk_log::append(std::span<std::byte> batch, leader_epoch epoch) {
  std::lock_guard lock(write_mutex_);
  if (closed_) return errc::log_closed;
  const model::batch_header_view header(batch);
  const bool idempotent = header.producer().value() >= 0;
  if (idempotent) {
    std::lock_guard producers_lock(producers_mutex_);
    FERRY_TRY(const auto duplicate, producers_.check(header));
    if (duplicate) {
      return append_result{duplicate->first_offset, duplicate->last_offset,
                           config_.log_append_time ? duplicate->max_timestamp : -1, log_start_offset(), true};
    }
  }
  const offset base = log_end_offset();
  const offset last{base.value() + header.last_offset_delta()};
  FERRY_TRY(maybe_roll(batch.size(), last));
  model::set_base_offset(batch, base);
  model::set_partition_leader_epoch(batch, epoch);
  const std::int64_t now_ms = clock_.now_ms();
  std::int64_t append_time = -1;
  if (config_.log_append_time) {
    append_time = now_ms;
    model::set_log_append_time(batch, append_time);
  }
  FERRY_TRY(segments_.back()->append(batch, config_.index_interval_bytes, now_ms));
  if (idempotent) {
    std::lock_guard producers_lock(producers_mutex_);
    producers_.update(header);
  }
  log_end_.store(next(last).value(), std::memory_order_release);
  unflushed_messages_ += header.last_offset_delta() + 1;
  if (unflushed_messages_ >= config_.flush_messages) {
    FERRY_TRY(flush_locked());
  }
  return append_result{base, last, append_time, log_start_offset(), false};
}

result<void> disk_log::maybe_roll(std::uint64_t batch_size, offset last) {
  const auto& active = segments_.back();
  const auto at = active->committed();
  if (at.size == 0) return success();  // an empty segment takes any batch, even one larger than segment.bytes
  const std::uint64_t max_size =
      static_cast<std::uint64_t>(std::clamp<std::int64_t>(config_.segment_bytes, 0, INT32_MAX));
  const auto since = active->rolling_since_ms();
  const bool full = at.size + batch_size > max_size || active->index_full() ||
                    last.value() - active->base_offset().value() > INT32_MAX;
  const bool old = since && clock_.now_ms() - *since > config_.segment_ms;
  if (!full && !old) return success();
  return roll();
}

result<void> disk_log::roll() {
  FERRY_TRY(segments_.back()->seal());
  unflushed_messages_ = 0;
  last_flush_ = clock_.steady_now();
  const offset base = log_end_offset();
  FERRY_TRY(write_snapshot(base));
  FERRY_TRY(auto created, segment::create(*fs_, directory_, base, config_.segment_index_bytes));
  FERRY_TRY(fs_->sync_directory(directory_));
  {
    std::unique_lock lock(segments_mutex_);
    segments_.push_back(std::move(created));
  }
  FERRY_LOG(info, "storage") << "rolled " << (directory_ / offset_file_name(base, log_suffix)).string();
  return success();
}

result<read_result> disk_log::read(offset from, std::uint64_t max_bytes, offset upto) {
  std::shared_ptr<segment> seg;
  {
    std::shared_lock lock(segments_mutex_);
    if (from < log_start_offset() || from > log_end_offset()) return errc::offset_out_of_range;
    seg = segment_for(from);
  }
  read_result out;
  offset current = from;
  while (seg && current < upto) {
    const auto at = seg->committed();
    if (current >= at.next_offset) break;
    FERRY_TRY(const auto first, seg->locate(current, at));
    // Stop before the batch that reaches `upto`.
    std::uint64_t bound = at.size;
    offset next = at.next_offset;
    if (upto < at.next_offset) {
      FERRY_TRY(const auto stop, seg->locate(upto, at));
      bound = stop.position;
      next = stop.base;
    }
    if (bound <= first.position) break;
    // The first batch goes out whatever its size, so consumers get past it.
    const std::uint64_t budget = out.total_bytes == 0 ? std::max(max_bytes, first.size) : max_bytes - out.total_bytes;
    std::uint64_t end = bound;
    if (budget < bound - first.position) {
      FERRY_TRY(const auto cut, seg->boundary_before(first.position, first.position + budget, at));
      end = cut.position;
      next = cut.next;
    }
    if (end == first.position) break;
    if (out.slices.empty()) out.first_offset = first.base;
    out.next_offset = next;
    out.slices.push_back({seg->log_file(), first.position, static_cast<std::uint32_t>(end - first.position)});
    out.total_bytes += end - first.position;
    if (end != at.size || out.total_bytes >= max_bytes) break;
    current = at.next_offset;
    std::shared_lock lock(segments_mutex_);
    seg = segment_for(current);
  }
  return out;
}

result<std::optional<log::timestamp_match>> disk_log::offset_for_timestamp(std::int64_t ts) {
  for (const auto& seg : all_segments()) {
    const auto at = seg->committed();
    if (at.max_timestamp < ts) continue;
    FERRY_TRY(const auto found, seg->find_timestamp(ts, at));
    if (!found) continue;
    // The batch holds the answer; its records say which one (Kafka answers with a record, not a batch).
    std::vector<std::byte> batch(found->size);
    FERRY_TRY(const std::size_t got, seg->log_file()->read_at(batch, found->position));
    if (got == batch.size()) {
      if (const auto record = model::first_record_at_or_after(batch, ts))
        return std::optional<timestamp_match>{timestamp_match{record->found, record->timestamp}};
    }
    FERRY_LOG(warn, "storage") << directory_.string() << ": the records of the batch at offset " << found->base
                               << " cannot be read; answering a timestamp lookup with the batch's first offset";
    return std::optional<timestamp_match>{timestamp_match{found->base, found->max_timestamp}};
  }
  return std::optional<timestamp_match>{};
}

std::optional<log::timestamp_match> disk_log::max_timestamp() {
  std::optional<timestamp_match> best;
  std::shared_ptr<segment> holder;
  segment::extent holder_extent;
  for (const auto& seg : all_segments()) {
    const auto at = seg->committed();
    if (at.max_timestamp >= 0 && (!best || at.max_timestamp > best->timestamp)) {
      best = timestamp_match{at.offset_of_max_timestamp, at.max_timestamp};
      holder = seg;
      holder_extent = at;
    }
  }
  if (!best) return best;
  // The segment knows the batch; its records say which record has the timestamp (the first that does).
  const auto located = holder->locate(best->found, holder_extent);
  if (!located) return best;
  std::vector<std::byte> batch(located.value().size);
  const auto got = holder->log_file()->read_at(batch, located.value().position);
  if (!got || got.value() != batch.size()) return best;
  if (const auto record = model::first_record_at_or_after(batch, best->timestamp))
    return timestamp_match{record->found, record->timestamp};
  return best;
}

std::uint64_t disk_log::size_bytes() const {
  std::uint64_t total = 0;
  for (const auto& seg : all_segments()) total += seg->committed().size;
  return total;
}

std::size_t disk_log::segment_count() const {
  std::shared_lock lock(segments_mutex_);
  return segments_.size();
}

std::optional<producer_entry> disk_log::producer(producer_id id) const {
  std::lock_guard lock(producers_mutex_);
  return producers_.find(id);
}

void disk_log::update_config(const log_config& config) {
  std::lock_guard lock(write_mutex_);
  config_ = config;
}

result<std::size_t> disk_log::apply_retention() {
  std::lock_guard lock(write_mutex_);
  if (closed_) return 0;
  const std::int64_t now_ms = clock_.now_ms();
  std::uint64_t total = 0;
  for (const auto& seg : segments_) total += seg->committed().size;
  // A prefix of the segments, never the active one.
  std::size_t expired = 0;
  for (; expired + 1 < segments_.size(); ++expired) {
    const auto at = segments_[expired]->committed();
    // A segment without timestamps is kept by time; retention.bytes still applies to it.
    const bool too_old =
        config_.retention_ms >= 0 && at.max_timestamp >= 0 && now_ms - at.max_timestamp > config_.retention_ms;
    const bool too_big =
        config_.retention_bytes >= 0 && total - at.size >= static_cast<std::uint64_t>(config_.retention_bytes);
    if (!too_old && !too_big) break;
    total -= at.size;
  }
  if (expired == 0) return 0;
  std::vector<std::shared_ptr<segment>> removed;
  offset start;
  {
    std::unique_lock segments_lock(segments_mutex_);
    removed.assign(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(expired));
    segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(expired));
    start = segments_.front()->base_offset();
    log_start_.store(start.value(), std::memory_order_release);
  }
  {
    std::lock_guard producers_lock(producers_mutex_);
    producers_.remove_before(start);
  }
  FERRY_LOG(info, "storage") << directory_.string() << ": retention removed " << expired
                             << " segments; log start offset is now " << start;
  // Readers that still hold a removed segment keep its open files; unlinking does not disturb them.
  result<void> outcome = success();
  for (const auto& seg : removed) {
    if (auto gone = seg->remove_files(*fs_); !gone && outcome) outcome = gone;
  }
  if (auto pruned = remove_snapshots_outside(start, log_end_offset()); !pruned && outcome) outcome = pruned;
  if (!outcome) return outcome.error();
  return expired;
}

result<void> disk_log::maybe_flush_by_time() {
  std::lock_guard lock(write_mutex_);
  if (closed_) return success();
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.steady_now() - last_flush_).count();
  if (waited < config_.flush_ms) return success();
  return flush_locked();
}

result<void> disk_log::flush() {
  std::lock_guard lock(write_mutex_);
  if (closed_) return success();
  return flush_locked();
}

result<void> disk_log::flush_locked() {
  FERRY_TRY(segments_.back()->flush());
  unflushed_messages_ = 0;
  last_flush_ = clock_.steady_now();
  return success();
}

result<void> disk_log::close() {
  std::lock_guard lock(write_mutex_);
  if (closed_) return success();
  closed_ = true;  // even if what follows fails: no more appends to files in an unknown state
  FERRY_TRY(segments_.back()->seal());
  return write_snapshot(log_end_offset());
}

result<void> disk_log::write_snapshot(offset at) {
  std::vector<std::byte> bytes;
  {
    std::lock_guard lock(producers_mutex_);
    bytes = producers_.serialize();
  }
  return write_file_atomically(*fs_, directory_ / offset_file_name(at, snapshot_suffix), bytes);
}

result<void> disk_log::remove_snapshots_outside(offset from, offset to) {
  FERRY_TRY(const auto names, fs_->list(directory_));
  for (const auto& name : names) {
    const auto at = parse_offset_file_name(name, snapshot_suffix);
    if (at && (*at < from || *at > to)) {
      FERRY_TRY(fs_->remove(directory_ / name));
    }
  }
  return success();
}

// Loads the newest readable snapshot at or below the log end, then replays the batch headers after it.
result<void> disk_log::load_producer_state() {
  FERRY_TRY(remove_snapshots_outside(log_start_offset(), log_end_offset()));
  FERRY_TRY(const auto names, fs_->list(directory_));
  offset replay_from = log_start_offset();
  for (auto name = names.rbegin(); name != names.rend(); ++name) {
    const auto at = parse_offset_file_name(*name, snapshot_suffix);
    if (!at) continue;
    FERRY_TRY(auto file, fs_->open(directory_ / *name, io::open_mode::read_only));
    FERRY_TRY(const std::uint64_t size, file->size());
    std::vector<std::byte> bytes(size);
    FERRY_TRY(const std::size_t got, file->read_at(bytes, 0));
    auto loaded = producer_state_manager::deserialize(std::span(bytes).first(got));
    if (!loaded) {
      FERRY_LOG(warn, "storage") << (directory_ / *name).string() << " is unreadable; using an older snapshot";
      continue;
    }
    producers_ = std::move(loaded).value();
    replay_from = *at;
    break;
  }
  for (const auto& seg : segments_) {
    const auto at = seg->committed();
    if (at.next_offset <= replay_from) continue;
    FERRY_TRY(seg->visit(replay_from, at, [&](const model::batch_header_view& header) {
      if (header.producer().value() >= 0) producers_.update(header);
    }));
  }
  return success();
}

}  // namespace

result<std::unique_ptr<log>> open_log(const open_options& options) {
  io::file_system& fs = *options.fs;
  const auto& directory = options.directory;
  const log_config& config = options.config;
  FERRY_TRY(fs.create_directories(directory));
  FERRY_TRY(const auto names, fs.list(directory));
  std::vector<offset> bases;
  for (const auto& name : names) {
    if (const auto base = parse_offset_file_name(name, log_suffix)) bases.push_back(*base);
  }
  // Index files whose .log is gone (a segment removal cut short) would be taken for a new segment's.
  for (const auto& name : names) {
    for (const auto suffix : {index_suffix, time_index_suffix}) {
      const auto base = parse_offset_file_name(name, suffix);
      if (base && !std::binary_search(bases.begin(), bases.end(), *base)) {
        FERRY_TRY(fs.remove(directory / name));
      }
    }
  }

  std::vector<std::shared_ptr<segment>> segments;
  for (std::size_t i = 0; i < bases.size(); ++i) {
    const bool last = i + 1 == bases.size();
    FERRY_TRY(auto seg, segment::open(fs, directory, bases[i], config.segment_index_bytes, last));
    if ((options.needs_recovery && last) || seg->index_suspect()) {
      FERRY_TRY(const std::uint64_t cut, seg->recover(config.index_interval_bytes));
      if (cut > 0 && !last) {
        // Offsets must stay contiguous: what follows a cut cannot be kept.
        FERRY_LOG(warn, "storage") << "recovery: removing " << bases.size() - i - 1 << " segments of "
                                   << directory.string() << " after offset " << seg->committed().next_offset;
        for (std::size_t j = i + 1; j < bases.size(); ++j) {
          for (const auto suffix : {log_suffix, index_suffix, time_index_suffix}) {
            FERRY_TRY(fs.remove(directory / offset_file_name(bases[j], suffix)));
          }
        }
        segments.push_back(std::move(seg));
        break;
      }
    }
    if (!segments.empty() && segments.back()->committed().next_offset > seg->base_offset()) {
      FERRY_LOG(error, "storage") << directory.string() << ": segment " << seg->base_offset()
                                  << " overlaps the one before it";
      return errc::corrupt_log;
    }
    segments.push_back(std::move(seg));
  }
  if (segments.empty()) {
    FERRY_TRY(auto created, segment::create(fs, directory, offset{0}, config.segment_index_bytes));
    FERRY_TRY(fs.sync_directory(directory));
    segments.push_back(std::move(created));
  }

  auto opened = std::make_unique<disk_log>(options, std::move(segments));
  FERRY_TRY(opened->load_producer_state());
  return std::unique_ptr<log>(std::move(opened));
}

}  // namespace ferry::storage
