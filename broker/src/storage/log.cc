#include "base/log.h"

#include <algorithm>

#include "model/records.h"
#include "storage/atomic_file.h"
#include "storage/disk_log.h"
#include "storage/file_names.h"

namespace ferry::storage {

std::shared_ptr<segment> disk_log::segment_for(offset o) const {
  const auto after = std::upper_bound(segments_.begin(), segments_.end(), o,
                                      [](offset value, const auto& s) { return value < s->base_offset(); });
  return after == segments_.begin() ? nullptr : *std::prev(after);
}

std::shared_ptr<segment> disk_log::segment_after(const segment& s) const {
  const auto after = std::upper_bound(segments_.begin(), segments_.end(), s.base_offset(),
                                      [](offset value, const auto& seg) { return value < seg->base_offset(); });
  return after == segments_.end() ? nullptr : *after;
}

std::vector<std::shared_ptr<segment>> disk_log::all_segments() const {
  std::shared_lock lock(segments_mutex_);
  return segments_;
}

std::error_code disk_log::offline_error() const { return make_error_code(errc::log_dir_offline); }

offset disk_log::visible_end() const {
  // Read in the reverse of the order append() stores them, so a batch that owes a flush is never seen.
  const std::int64_t end = log_end_.load(std::memory_order_acquire);
  const std::int64_t owed = flush_owed_.load(std::memory_order_acquire);
  const std::int64_t flushed = flushed_.load(std::memory_order_acquire);
  return offset{owed > flushed ? std::min(flushed, end) : end};
}

void disk_log::in_background(std::function<void(disk_log&)> work) {
  {
    std::lock_guard lock(background_mutex_);
    ++background_pending_;
  }
  auto task = [weak = weak_from_this(), work = std::move(work)] {
    const auto self = weak.lock();
    if (!self) return;
    work(*self);
    std::lock_guard lock(self->background_mutex_);
    if (--self->background_pending_ == 0) self->background_done_.notify_all();
  };
  work_.run(std::move(task));
}

void disk_log::wait_for_background() {
  std::unique_lock lock(background_mutex_);
  background_done_.wait(lock, [&] { return background_pending_ == 0; });
}

std::error_code disk_log::check_keys(std::span<const std::byte> batch) const {
  std::vector<std::byte> scratch;
  bool keyless = false;
  const auto walked =
      model::for_each_stored_record(batch, model::max_lookup_record_bytes, scratch, [&](const model::record_view& r) {
        keyless = !r.key;
        return !keyless;
      });
  if (!walked) return walked.error();
  return keyless ? make_error_code(errc::missing_key) : std::error_code{};
}

result<append_result> disk_log::append(std::span<std::byte> batch, leader_epoch epoch) {
  return append_checked(batch, epoch, false);
}

result<append_result> disk_log::append_from_coordinator(std::span<std::byte> batch, leader_epoch epoch) {
  return append_checked(batch, epoch, true);
}

result<append_result> disk_log::append_checked(std::span<std::byte> batch, leader_epoch epoch, bool from_coordinator) {
  // Outside the lock: a walk over the records (the produce path checked them already).
  if (compact_.load(std::memory_order_relaxed)) {
    if (const auto refused = check_keys(batch)) return refused;
  }
  std::lock_guard lock(write_mutex_);
  if (closed_) return errc::log_closed;
  if (dir_->offline()) return offline_error();
  const model::batch_header_view header(batch);
  const bool idempotent = header.producer().value() >= 0;
  if (idempotent) {
    std::lock_guard producers_lock(producers_mutex_);
    FERRY_TRY(const auto duplicate, from_coordinator ? producers_.check_epoch(header) : producers_.check(header));
    if (duplicate) {
      return append_result{duplicate->first_offset,
                           duplicate->last_offset,
                           config_.log_append_time ? duplicate->max_timestamp : -1,
                           log_start_offset(),
                           true,
                           false};
    }
  }
  if (header.is_transactional()) has_transactions_.store(true, std::memory_order_release);
  FERRY_TRY(auto written, write_locked(batch, epoch));
  if (idempotent) {
    std::lock_guard producers_lock(producers_mutex_);
    producers_.update(header);
  }
  return written;
}

result<append_result> disk_log::write_locked(std::span<std::byte> batch, leader_epoch epoch) {
  // The caller read the epoch before it had the lock: a leadership that ended meanwhile writes nothing.
  if (role_ == role::following || (epoch.value() >= 0 && epoch.value() < latest_epoch_.load(std::memory_order_relaxed)))
    return errc::role_changed;
  const model::batch_header_view header(batch);
  const offset base = log_end_offset();
  // Only a damaged log ends so near INT64_MAX (a segment file named there) that a batch's offsets run past it.
  if (base.value() > INT64_MAX - 1 - header.last_offset_delta()) return errc::corrupt_log;
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
  if (auto written = segments_.back()->append(batch, config_.index_interval_bytes, now_ms); !written)
    return io_failed("writing " + std::to_string(batch.size()) + " bytes", written.error());
  if (epoch.value() >= 0 && epoch.value() != latest_epoch_.load(std::memory_order_relaxed)) record_epoch(epoch, base);
  // Kafka's unflushed messages: the offsets appended since the recovery point.
  const bool flush_required = next(last).value() - flushed_.load(std::memory_order_acquire) >= config_.flush_messages;
  if (flush_required) flush_owed_.store(next(last).value(), std::memory_order_release);
  log_end_.store(next(last).value(), std::memory_order_release);
  return append_result{base, last, append_time, log_start_offset(), false, flush_required};
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
  // A compacted log rolls by max.compaction.lag.ms too: the cleaner never touches the active segment.
  const std::int64_t max_age_ms =
      config_.compact ? std::min(config_.segment_ms, config_.max_compaction_lag_ms) : config_.segment_ms;
  const bool old = since && clock_.now_ms() - *since > max_age_ms;
  if (!full && !old) return success();
  return roll();
}

result<void> disk_log::roll() {
  const offset base = log_end_offset();
  // Creating files is metadata work the kernel does without waiting for the disk; the fsyncs that make the
  // rolled segment final and the new one durable run in the background.
  auto created = segment::create(*fs_, directory_, base, config_.segment_index_bytes);
  if (!created) return io_failed("creating segment " + std::to_string(base.value()), created.error());
  std::shared_ptr<segment> rolled = segments_.back();
  {
    std::unique_lock lock(segments_mutex_);
    segments_.push_back(std::move(created).value());
  }
  directory_dirty_ = true;
  std::vector<std::byte> snapshot;
  {
    std::lock_guard lock(producers_mutex_);
    snapshot = producers_.serialize();
  }
  in_background([rolled, snapshot = std::move(snapshot), base](disk_log& self) mutable {
    self.seal_rolled(rolled, std::move(snapshot), base);
    if (self.on_recovery_point_moved_) self.on_recovery_point_moved_();
  });
  FERRY_LOG(info, "storage") << "rolled " << (directory_ / offset_file_name(base, log_suffix)).string();
  return success();
}

void disk_log::seal_rolled(const std::shared_ptr<segment>& rolled, std::vector<std::byte> snapshot, offset at) {
  if (dir_->offline()) return;
  if (auto sealed = rolled->seal(); !sealed) {
    io_failed("sealing segment " + std::to_string(rolled->base_offset().value()), sealed.error());
    return;
  }
  if (auto synced = fs_->sync_directory(directory_); !synced) {
    io_failed("syncing the directory", synced.error());
    return;
  }
  directory_dirty_ = false;
  if (auto written = write_snapshot(at, snapshot); !written)
    io_failed("writing the producer snapshot", written.error());
  std::lock_guard lock(flush_mutex_);
  if (!write_epoch_checkpoint()) return;
  advance_flushed_over_sealed();
}

void disk_log::advance_flushed_over_sealed() {
  std::shared_lock lock(segments_mutex_);
  auto seg = segment_for(flushed_offset());
  while (seg && seg->sealed()) {
    const auto end = seg->committed().next_offset;
    if (end.value() > flushed_.load()) flushed_.store(end.value(), std::memory_order_release);
    seg = segment_after(*seg);
  }
}

result<read_result> disk_log::read(offset from, std::uint64_t max_bytes, offset upto) {
  if (dir_->offline()) return offline_error();
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
    if (current >= at.next_offset) {
      // Past this segment's readable end: a gap a damaged segment left (or the log end). A read that found
      // nothing yet goes on at the next segment's first batch.
      if (!out.slices.empty()) break;
      std::shared_lock lock(segments_mutex_);
      seg = segment_after(*seg);
      if (seg) current = std::max(current, seg->base_offset());
      continue;
    }
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
    seg = segment_for(current);  // nullptr when retention removed what follows meanwhile
  }
  return out;
}

result<std::optional<log::timestamp_match>> disk_log::offset_for_timestamp(std::int64_t ts) {
  if (dir_->offline()) return offline_error();
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

result<std::uint64_t> disk_log::size_bytes_from(offset from) {
  if (dir_->offline()) return offline_error();
  std::shared_ptr<segment> first;
  std::vector<std::shared_ptr<segment>> later;
  {
    std::shared_lock lock(segments_mutex_);
    if (from >= log_end_offset()) return std::uint64_t{0};
    first = segment_for(std::max(from, log_start_offset()));
    for (auto next = first ? segment_after(*first) : nullptr; next; next = segment_after(*next)) later.push_back(next);
  }
  std::uint64_t bytes = 0;
  if (first) {
    const auto at = first->committed();
    if (from < at.next_offset) {
      FERRY_TRY(const auto batch, first->locate(std::max(from, first->base_offset()), at));
      bytes += at.size - batch.position;
    }
  }
  for (const auto& seg : later) bytes += seg->committed().size;
  return bytes;
}

std::size_t disk_log::segment_count() const {
  std::shared_lock lock(segments_mutex_);
  return segments_.size();
}

std::optional<producer_entry> disk_log::producer(producer_id id) const {
  std::lock_guard lock(producers_mutex_);
  return producers_.find(id);
}

std::vector<std::pair<producer_id, producer_entry>> disk_log::producers() const {
  std::lock_guard lock(producers_mutex_);
  return {producers_.all().begin(), producers_.all().end()};
}

void disk_log::begin_epoch(leader_epoch epoch) {
  std::lock_guard lock(write_mutex_);
  role_ = role::leading;
  record_epoch(epoch, log_end_offset());
}

void disk_log::follow() {
  std::lock_guard lock(write_mutex_);
  role_ = role::following;
}

epoch_end disk_log::end_offset_for_epoch(leader_epoch epoch) const {
  std::lock_guard lock(epochs_mutex_);
  return epochs_.end_offset_for(epoch, log_end_offset());
}

void disk_log::record_epoch(leader_epoch epoch, offset start) {
  std::lock_guard lock(epochs_mutex_);
  if (epochs_.assign(epoch, start)) epochs_dirty_ = true;
  latest_epoch_.store(epochs_.latest_epoch().value_or(no_leader_epoch).value(), std::memory_order_relaxed);
}

result<void> disk_log::write_epoch_checkpoint() {
  std::string text;
  {
    std::lock_guard lock(epochs_mutex_);
    if (!epochs_dirty_) return success();
    text = encode_leader_epoch_checkpoint(epochs_.entries());
    epochs_dirty_ = false;
  }
  if (auto written = write_file_atomically(*fs_, directory_ / leader_epoch_checkpoint, text); !written) {
    std::lock_guard lock(epochs_mutex_);
    epochs_dirty_ = true;
    return io_failed("writing the leader epoch checkpoint", written.error());
  }
  return success();
}

void disk_log::update_config(const log_config& config) {
  std::lock_guard lock(write_mutex_);
  config_ = config;
  compact_ = config.compact;
  flush_ms_ = config.flush_ms;
  flush_messages_ = config.flush_messages;
}

std::size_t disk_log::expire_producers(std::int64_t expiration_ms) {
  const std::int64_t now_ms = clock_.now_ms();
  std::lock_guard lock(producers_mutex_);
  return producers_.remove_expired(now_ms, expiration_ms);
}

result<std::size_t> disk_log::apply_retention() {
  std::lock_guard swap_lock(swap_mutex_);
  std::size_t expired = 0;
  std::int64_t delete_delay_ms = 0;
  offset start;
  {
    std::lock_guard lock(write_mutex_);
    if (closed_ || dir_->offline() || !config_.delete_policy) return 0;
    delete_delay_ms = config_.file_delete_delay_ms;
    const std::int64_t now_ms = clock_.now_ms();
    std::uint64_t total = 0;
    for (const auto& seg : segments_) total += seg->committed().size;
    // A prefix of the segments, never the active one, and only sealed ones (a rolled segment is sealed in
    // the background shortly after the roll).
    const std::int64_t high_watermark = high_watermark_.load(std::memory_order_acquire);
    for (; expired + 1 < segments_.size() && segments_[expired]->sealed(); ++expired) {
      // Only whole segments below the high watermark (Kafka's deletableSegments): the log start never passes it.
      if (segments_[expired + 1]->base_offset().value() > high_watermark) break;
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
    start = segments_[expired]->base_offset();
  }
  FERRY_TRY(remove_first_segments(expired, start, delete_delay_ms, "retention"));
  return expired;
}

result<offset> disk_log::advance_log_start(offset to) {
  std::lock_guard swap_lock(swap_mutex_);
  std::size_t below = 0;
  std::int64_t delete_delay_ms = 0;
  {
    std::lock_guard lock(write_mutex_);
    if (closed_) return errc::log_closed;
    if (dir_->offline()) return offline_error();
    to = std::min(to, log_end_offset());
    if (to <= log_start_offset()) return log_start_offset();
    delete_delay_ms = config_.file_delete_delay_ms;
    // Whole segments below the new start go at once; the one it falls inside stays, read from the start on.
    while (below + 1 < segments_.size() && segments_[below + 1]->base_offset() <= to) ++below;
    if (below == 0) {
      log_start_.store(to.value(), std::memory_order_release);
      std::lock_guard producers_lock(producers_mutex_);
      producers_.remove_before(to);
      std::lock_guard epochs_lock(epochs_mutex_);
      if (epochs_.truncate_from_start(to)) epochs_dirty_ = true;
      return to;
    }
  }
  FERRY_TRY(remove_first_segments(below, to, delete_delay_ms, "a deletion of records"));
  return log_start_offset();
}

result<void> disk_log::remove_first_segments(std::size_t count, offset start, std::int64_t delete_delay_ms,
                                             std::string_view why) {
  std::vector<std::shared_ptr<segment>> removed;
  {
    std::lock_guard lock(write_mutex_);
    if (closed_) return errc::log_closed;
    count = std::min(count, segments_.size() - 1);  // never the active segment
    {
      std::unique_lock segments_lock(segments_mutex_);
      removed.assign(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(count));
      segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(count));
      // A start moved past the first segment's base (DeleteRecords) stays where it is.
      start = std::max({start, segments_.front()->base_offset(), log_start_offset()});
      log_start_.store(start.value(), std::memory_order_release);
    }
    {
      std::lock_guard producers_lock(producers_mutex_);
      producers_.remove_before(start);
    }
    std::lock_guard epochs_lock(epochs_mutex_);
    if (epochs_.truncate_from_start(start)) epochs_dirty_ = true;
  }
  FERRY_LOG(info, "storage") << directory_.string() << ": " << why << " removed " << removed.size()
                             << " segments; log start offset is now " << start;
  // Outside the lock: renames are metadata work, and the unlinks wait for file.delete.delay.ms. Readers that
  // still hold a removed segment keep its open files either way.
  result<void> outcome = success();
  for (const auto& seg : removed) {
    if (auto renamed = seg->rename_to_deleted(*fs_); !renamed && outcome) outcome = renamed;
  }
  // Not counted as the log's background work: it needs only the files, and close() must not wait out the delay.
  work_.run_after(std::chrono::milliseconds(std::max<std::int64_t>(delete_delay_ms, 0)),
                  [removed, fs = fs_, directory = directory_] {
                    for (const auto& seg : removed) {
                      if (auto gone = seg->remove_deleted_files(*fs); !gone)
                        FERRY_LOG(warn, "storage") << "removing deleted segment files of " << directory.string()
                                                   << " failed: " << gone.error().message();
                    }
                  });
  if (auto pruned = remove_snapshots_outside(start, log_end_offset()); !pruned && outcome) outcome = pruned;
  return outcome;
}

result<void> disk_log::flush(offset upto) {
  std::lock_guard lock(flush_mutex_);
  if (dir_->offline()) return offline_error();
  if (flushed_offset() >= upto) return success();
  // Everything written before the fsyncs start is covered by them.
  const offset end = log_end_offset();
  std::vector<std::shared_ptr<segment>> pending;
  {
    std::shared_lock segments_lock(segments_mutex_);
    auto seg = segment_for(flushed_offset());
    for (seg = seg ? seg : segments_.front(); seg; seg = segment_after(*seg)) pending.push_back(seg);
  }
  for (const auto& seg : pending) {
    if (auto synced = seg->flush(); !synced)
      return io_failed("fsync of segment " + std::to_string(seg->base_offset().value()), synced.error());
  }
  if (directory_dirty_.exchange(false)) {
    if (auto synced = fs_->sync_directory(directory_); !synced) {
      directory_dirty_ = true;
      return io_failed("fsync of the directory", synced.error());
    }
  }
  FERRY_TRY(write_epoch_checkpoint());
  if (end.value() > flushed_.load()) flushed_.store(end.value(), std::memory_order_release);
  last_flush_.store(clock_.steady_now().time_since_epoch().count(), std::memory_order_relaxed);
  return success();
}

result<void> disk_log::maybe_flush_by_time() {
  const std::int64_t flush_ms = flush_ms_.load();
  if (flush_ms == INT64_MAX || flushed_offset() >= log_end_offset()) return success();
  const auto since = clock_.steady_now() -
                     std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(last_flush_.load()));
  if (std::chrono::duration_cast<std::chrono::milliseconds>(since).count() < flush_ms) return success();
  return flush(log_end_offset());
}

std::size_t disk_log::release_idle_indexes(std::chrono::steady_clock::time_point idle_before) {
  std::size_t closed = 0;
  for (const auto& seg : all_segments())
    if (seg->release_idle_indexes(idle_before)) ++closed;
  return closed;
}

result<void> disk_log::close() {
  {
    std::lock_guard swap_lock(swap_mutex_);  // a compaction swap finishes first, and none starts after
    std::lock_guard lock(write_mutex_);
    if (closed_) return success();
    closed_ = true;  // even if what follows fails: no more appends to files in an unknown state
  }
  wait_for_background();
  if (dir_->offline()) return offline_error();
  for (const auto& seg : all_segments()) {
    if (seg->sealed()) continue;
    if (auto sealed = seg->seal(); !sealed) return io_failed("sealing a segment at close", sealed.error());
  }
  std::vector<std::byte> bytes;
  {
    std::lock_guard lock(producers_mutex_);
    bytes = producers_.serialize();
  }
  if (auto written = write_snapshot(log_end_offset(), bytes); !written)
    return io_failed("writing the producer snapshot", written.error());
  std::lock_guard lock(flush_mutex_);
  FERRY_TRY(write_epoch_checkpoint());
  flushed_.store(log_end_.load(), std::memory_order_release);
  return success();
}

result<void> disk_log::write_snapshot(offset at, std::span<const std::byte> bytes) {
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
  if (producers_.first_open_txn()) has_transactions_.store(true, std::memory_order_release);
  if (std::ranges::any_of(names, [](const auto& name) { return name.ends_with(txn_index_suffix); }))
    has_aborted_.store(true, std::memory_order_release);
  for (const auto& seg : segments_) {
    const auto at = seg->committed();
    if (at.next_offset <= replay_from) continue;
    // The replay writes the transaction index entries of the markers it passes again.
    if (auto removed = seg->remove_aborted_from(replay_from); !removed)
      return io_failed("rewriting the transaction index of segment " + std::to_string(seg->base_offset().value()),
                       removed.error());
    result<void> noted = success();
    FERRY_TRY(seg->visit(std::max(replay_from, seg->base_offset()), at,
                         [&](const model::batch_header_view& header, std::span<const std::byte> control_batch) {
                           if (header.producer().value() < 0 || !noted) return;
                           if (header.is_transactional()) has_transactions_.store(true, std::memory_order_release);
                           if (header.is_control()) {
                             noted = note_marker(header, control_batch, *seg);
                           } else {
                             producers_.update(header);
                           }
                         }));
    if (!noted) return noted.error();
  }
  return success();
}

// The checkpoint is trusted below the recovery point (write_epoch_checkpoint runs before the flushed offset
// moves), and everywhere after a clean close; past it the batches say which epoch wrote them.
result<void> disk_log::load_leader_epochs(offset trusted_below) {
  const auto path = directory_ / leader_epoch_checkpoint;
  FERRY_TRY(const auto text, read_small_file(*fs_, path));
  std::optional<std::vector<epoch_entry>> on_disk;
  if (text) {
    auto decoded = decode_leader_epoch_checkpoint(*text);
    if (decoded) on_disk = std::move(decoded).value();
  }
  offset replay_from = log_start_offset();
  if (on_disk) {
    epochs_ = leader_epoch_cache(*on_disk);
    replay_from = std::min(trusted_below, log_end_offset());
    epochs_.truncate_from_end(replay_from);
  } else if (log_end_offset() > log_start_offset()) {
    FERRY_LOG(warn, "storage") << path.string() << (text ? " is unreadable" : " is missing")
                               << "; reading the leader epochs from every batch of the log";
  }
  for (const auto& seg : segments_) {
    const auto at = seg->committed();
    if (at.next_offset <= replay_from) continue;
    FERRY_TRY(seg->visit(std::max(replay_from, seg->base_offset()), at,
                         [&](const model::batch_header_view& header, std::span<const std::byte>) {
                           if (header.base_offset() >= replay_from)
                             epochs_.assign(header.partition_leader_epoch(), header.base_offset());
                         }));
  }
  epochs_.truncate_from_start(log_start_offset());
  const auto entries = epochs_.entries();
  epochs_dirty_ = on_disk ? !std::ranges::equal(entries, *on_disk) : !entries.empty();
  latest_epoch_.store(epochs_.latest_epoch().value_or(no_leader_epoch).value(), std::memory_order_relaxed);
  return success();
}

namespace {

// Removes what a crash can leave besides segments: index files whose .log is gone (a segment removal cut
// short; they would be taken for a new segment's), "*.deleted" files whose delay had not run out, temporary
// files of snapshots being written, and the log cleaner's files (its swaps completed first, file_names.h).
result<std::vector<offset>> tidy_directory(io::file_system& fs, const std::filesystem::path& directory) {
  FERRY_TRY(complete_swaps(fs, directory));
  FERRY_TRY(const auto names, fs.list(directory));
  std::vector<offset> bases;
  for (const auto& name : names) {
    if (const auto base = parse_offset_file_name(name, log_suffix)) bases.push_back(*base);
  }
  for (const auto& name : names) {
    // After complete_swaps, "*.swap" files are index files of a swap that had not begun.
    bool stale = name.ends_with(deleted_suffix) || name.ends_with(temporary_suffix) || name.ends_with(cleaned_suffix) ||
                 name.ends_with(swap_suffix);
    for (const auto suffix : {index_suffix, time_index_suffix, txn_index_suffix}) {
      const auto base = parse_offset_file_name(name, suffix);
      if (base && !std::binary_search(bases.begin(), bases.end(), *base)) stale = true;
    }
    if (stale) {
      FERRY_TRY(fs.remove(directory / name));
    }
  }
  return bases;
}

}  // namespace

result<std::shared_ptr<log>> open_log(const open_options& options) {
  io::file_system& fs = *options.fs;
  const auto& directory = options.directory;
  const log_config& config = options.config;
  FERRY_TRY(fs.create_directories(directory));
  FERRY_TRY(const auto bases, tidy_directory(fs, directory));
  const offset recovery_point = options.recovery_point;

  std::vector<std::shared_ptr<segment>> segments;
  for (std::size_t i = 0; i < bases.size(); ++i) {
    const bool last = i + 1 == bases.size();
    const bool below_recovery_point = !last && bases[i + 1] <= recovery_point;
    FERRY_TRY(auto seg, segment::open(fs, directory, bases[i], config.segment_index_bytes, last));
    // Checked before recovery, whose cut below stops the loop: a log whose last segment starts inside the one
    // before it would end below offsets it holds, and hand them out again.
    if (!segments.empty() && segments.back()->committed().next_offset > seg->base_offset()) {
      FERRY_LOG(error, "storage") << directory.string() << ": segment " << seg->base_offset()
                                  << " overlaps the one before it";
      return errc::corrupt_log;
    }
    const bool scan = (options.needs_recovery && !below_recovery_point) || seg->index_suspect();
    if (scan) {
      // Damage below the recovery point is flushed data and stays; past it, it was never flushed and is cut.
      FERRY_TRY(const std::uint64_t cut, seg->recover(config.index_interval_bytes, recovery_point));
      if (seg->damaged()) {
        FERRY_LOG(error, "storage") << "recovery: " << seg->damage() << ", in flushed data (the recovery point is "
                                    << recovery_point << "): the segment stays readable up to there, the rest of "
                                    << "it is kept on disk unread, and later segments are kept";
      } else if (cut > 0 && !last) {
        // Unflushed data was cut, and every later segment goes with it (all of it past the recovery point).
        FERRY_LOG(warn, "storage") << "recovery: removing " << bases.size() - i - 1 << " unflushed segments of "
                                   << directory.string() << " after offset " << seg->committed().next_offset;
        for (std::size_t j = i + 1; j < bases.size(); ++j) {
          for (const auto suffix : segment_file_suffixes) {
            FERRY_TRY(fs.remove(directory / offset_file_name(bases[j], suffix)));
          }
        }
        segments.push_back(std::move(seg));
        break;
      }
    }
    segments.push_back(std::move(seg));
  }
  if (!segments.empty() && segments.back()->damaged()) {
    // The active segment lost flushed records after a bad batch: it takes no appends (they would reuse
    // offsets it had handed out). A new segment starts past everything that was ever flushed.
    const auto& damaged = segments.back();
    FERRY_TRY(damaged->seal());
    const offset end = damaged->committed().next_offset;
    // Never below the recovery point (offsets up to it were handed out), and never absurdly far past the
    // segment (a segment spans at most 2^31 offsets).
    const std::int64_t furthest = end.value() > INT64_MAX - INT32_MAX ? INT64_MAX : end.value() + INT32_MAX;
    const offset base{std::clamp(recovery_point.value(), end.value(), furthest)};
    FERRY_TRY(auto created, segment::create(fs, directory, base, config.segment_index_bytes));
    FERRY_TRY(fs.sync_directory(directory));
    segments.push_back(std::move(created));
  }
  if (segments.empty()) {
    FERRY_TRY(auto created, segment::create(fs, directory, offset{0}, config.segment_index_bytes));
    FERRY_TRY(fs.sync_directory(directory));
    segments.push_back(std::move(created));
  }

  // Recovery fsynced what it scanned, and what it trusted was flushed before: all of it is on disk.
  const offset flushed = segments.back()->committed().next_offset;
  // A damaged segment that is not the last one is a hole that later records follow.
  std::optional<offset> damaged_from;
  for (std::size_t i = 0; i + 1 < segments.size() && !damaged_from; ++i)
    if (segments[i]->damaged()) damaged_from = segments[i]->committed().next_offset;
  auto opened = std::make_shared<disk_log>(options, std::move(segments), flushed);
  if (damaged_from) opened->note_damage(*damaged_from);
  FERRY_TRY(opened->load_producer_state());
  FERRY_TRY(opened->load_cleaner_state());
  FERRY_TRY(opened->load_leader_epochs(options.needs_recovery ? recovery_point : offset{INT64_MAX}));
  // Where DeleteRecords moved the log start, inside the first segment (the log-start-offset-checkpoint).
  if (options.log_start > opened->log_start_offset()) {
    FERRY_TRY(opened->advance_log_start(options.log_start));
  }
  return std::shared_ptr<log>(std::move(opened));
}

}  // namespace ferry::storage
