// The follower's writes to a partition log: batches replicated from the leader, and truncation to where the
// leader's log and this one agree.
#include "base/log.h"
#include "model/record_batch.h"
#include "storage/disk_log.h"
#include "storage/file_names.h"

namespace ferry::storage {

result<append_result> disk_log::append_replicated(std::span<const std::byte> batches) {
  std::lock_guard lock(write_mutex_);
  if (closed_) return errc::log_closed;
  if (role_ == role::leading) return errc::role_changed;  // it leads now: the old leader's batches go nowhere
  if (dir_->offline()) return offline_error();
  append_result out{log_end_offset(), offset{log_end_offset().value() - 1}, -1, log_start_offset(), false, false};
  const std::int64_t now_ms = clock_.now_ms();
  while (!batches.empty()) {
    // A fetch response may end inside a batch (Kafka's leaders cut at the byte limit): that batch comes again.
    const std::size_t size = model::peek_batch_size(batches);
    if (size == 0 || size > batches.size()) break;
    const auto batch = batches.first(size);
    if (const auto invalid = model::validate_batch(batch, {.max_batch_bytes = SIZE_MAX, .from_client = false}))
      return invalid;
    const model::batch_header_view header(batch);
    // Past the log end is a gap in the leader's log (Kafka's followers take those too: compaction leaves them, and
    // so does a leader's recovery that reads around damaged flushed data); before it would reuse offsets.
    if (header.base_offset() < log_end_offset()) {
      FERRY_LOG(error, "storage") << directory_.string() << ": a replicated batch starts at " << header.base_offset()
                                  << ", before the log end " << log_end_offset();
      return errc::out_of_order_offsets;
    }
    // A segment is named after its first batch: an empty active segment moves to where the batch after a gap
    // starts (Kafka's roll replaces an empty active segment the same way).
    if (header.base_offset() > log_end_offset() && segments_.back()->committed().size == 0) {
      FERRY_TRY(rebase_empty_active(header.base_offset()));
    }
    const offset last = header.last_offset();
    FERRY_TRY(maybe_roll(size, last));
    if (auto written = segments_.back()->append(batch, config_.index_interval_bytes, now_ms); !written)
      return io_failed("writing " + std::to_string(size) + " replicated bytes", written.error());
    if (header.producer().value() >= 0) {
      std::lock_guard producers_lock(producers_mutex_);
      if (header.is_transactional()) has_transactions_.store(true, std::memory_order_release);
      if (header.is_control()) {
        FERRY_TRY(note_marker(header, batch, *segments_.back()));
      } else {
        producers_.update(header);
      }
    }
    const leader_epoch epoch = header.partition_leader_epoch();
    if (epoch.value() >= 0 && epoch.value() != latest_epoch_.load(std::memory_order_relaxed))
      record_epoch(epoch, header.base_offset());
    if (next(last).value() - flushed_.load(std::memory_order_acquire) >= config_.flush_messages) {
      flush_owed_.store(next(last).value(), std::memory_order_release);
      out.flush_required = true;
    }
    log_end_.store(next(last).value(), std::memory_order_release);
    out.last_offset = last;
    batches = batches.subspan(size);
  }
  return out;
}

result<void> disk_log::rebase_empty_active(offset base) {
  const auto empty = segments_.back();
  auto created = segment::create(*fs_, directory_, base, config_.segment_index_bytes);
  if (!created) return io_failed("creating segment " + std::to_string(base.value()), created.error());
  {
    std::unique_lock lock(segments_mutex_);
    segments_.back() = std::move(created).value();
    // Nothing is below the new segment: the log starts there.
    if (segments_.size() == 1) log_start_.store(base.value(), std::memory_order_release);
  }
  for (const auto suffix : segment_file_suffixes) {
    if (auto removed = fs_->remove(directory_ / offset_file_name(empty->base_offset(), suffix)); !removed)
      return io_failed("removing an empty segment", removed.error());
  }
  directory_dirty_ = true;
  return success();
}

result<void> disk_log::truncate(offset end, bool reset) {
  std::lock_guard swap_lock(swap_mutex_);
  std::lock_guard lock(write_mutex_);
  if (closed_) return errc::log_closed;
  if (dir_->offline()) return offline_error();
  const offset before = log_end_offset();
  const bool emptied = reset || end <= log_start_offset();
  if (!emptied && end >= before) {
    // Nothing to cut, but an epoch may start at the log end: this broker led it and was replaced before it
    // appended anything. A follower told that its log diverged must not name that epoch as the last it fetched
    // again, or the leader tells it the same forever (Kafka's truncateTo drops it too).
    std::lock_guard epochs_lock(epochs_mutex_);
    if (epochs_.truncate_from_end(before)) {
      epochs_dirty_ = true;
      latest_epoch_.store(epochs_.latest_epoch().value_or(no_leader_epoch).value(), std::memory_order_relaxed);
    }
    return success();
  }
  // A seal in flight must not run on a segment being cut; none starts while the writer lock is held.
  wait_for_background();
  std::lock_guard flush_lock(flush_mutex_);
  offset new_end = end;
  if (emptied) {
    FERRY_TRY(restart_at(end));
  } else {
    FERRY_TRY(new_end, cut_segments_at(end));
  }
  log_end_.store(new_end.value(), std::memory_order_release);
  if (emptied || damaged_from_.load() >= new_end.value()) damaged_from_.store(-1);
  if (flushed_.load() > new_end.value()) {
    flushed_.store(new_end.value(), std::memory_order_release);
    // The recovery-point checkpoint may name flushed data the cut removed, and the leader's records that come
    // next are not flushed: it is written again at once (review finding 13).
    if (on_recovery_point_moved_) in_background([](disk_log& self) { self.on_recovery_point_moved_(); });
  }
  if (flush_owed_.load() > new_end.value()) flush_owed_.store(new_end.value(), std::memory_order_release);
  FERRY_TRY(reload_producer_state());
  if (cleaner_.first_dirty > new_end) {
    // What is appended from here on is dirty, and the horizons of removed segments go with them.
    cleaner_.first_dirty = new_end;
    std::erase_if(cleaner_.delete_horizons, [&](const auto& entry) { return entry.first >= new_end; });
    FERRY_TRY(write_cleaner_state());
  }
  {
    std::lock_guard epochs_lock(epochs_mutex_);
    if (emptied) {
      epochs_ = leader_epoch_cache{};
      epochs_dirty_ = true;
    } else if (epochs_.truncate_from_end(new_end)) {
      epochs_dirty_ = true;
    }
    latest_epoch_.store(epochs_.latest_epoch().value_or(no_leader_epoch).value(), std::memory_order_relaxed);
  }
  FERRY_LOG(warn, "storage") << directory_.string() << ": truncated to offset " << new_end << " (the log ended at "
                             << before << ")";
  return success();
}

result<offset> disk_log::cut_segments_at(offset end) {
  std::shared_ptr<segment> seg;
  std::vector<std::shared_ptr<segment>> later;
  {
    std::shared_lock segments_lock(segments_mutex_);
    seg = segment_for(end);
  }
  const auto at = seg->committed();
  std::uint64_t cut = at.size;
  if (end < at.next_offset) {
    FERRY_TRY(const auto found, seg->locate(end, at));
    cut = found.position;
  }
  for (auto s = segment_after(*seg); s; s = segment_after(*s)) later.push_back(s);
  for (const auto& s : later) {
    for (const auto suffix : segment_file_suffixes) {
      if (auto removed = fs_->remove(directory_ / offset_file_name(s->base_offset(), suffix)); !removed)
        return io_failed("removing a truncated segment", removed.error());
    }
  }
  if (auto cut_done = seg->log_file()->truncate(cut); !cut_done)
    return io_failed("truncating a segment", cut_done.error());
  // Reopened as the active segment: its indexes are rebuilt from what is left of it.
  auto reopened = segment::open(*fs_, directory_, seg->base_offset(), config_.segment_index_bytes, true);
  if (!reopened) return io_failed("reopening a truncated segment", reopened.error());
  FERRY_TRY(reopened.value()->recover(config_.index_interval_bytes, segment::cut_everything));
  // The aborted transactions whose markers were cut go too (Kafka's LogSegment.truncateTo trims the txn index),
  // whatever the producer-state replay later skips.
  if (auto trimmed = reopened.value()->remove_aborted_from(end); !trimmed)
    return io_failed("trimming a truncated segment's aborted transactions", trimmed.error());
  {
    std::unique_lock segments_lock(segments_mutex_);
    segments_.resize(segments_.size() - later.size());
    segments_.back() = reopened.value();
  }
  directory_dirty_ = true;
  return reopened.value()->committed().next_offset;
}

result<void> disk_log::restart_at(offset start) {
  for (const auto& s : all_segments()) {
    for (const auto suffix : segment_file_suffixes) {
      if (auto removed = fs_->remove(directory_ / offset_file_name(s->base_offset(), suffix)); !removed)
        return io_failed("removing a segment", removed.error());
    }
  }
  auto created = segment::create(*fs_, directory_, start, config_.segment_index_bytes);
  if (!created) return io_failed("creating segment " + std::to_string(start.value()), created.error());
  {
    std::unique_lock segments_lock(segments_mutex_);
    segments_.assign(1, std::move(created).value());
    log_start_.store(start.value(), std::memory_order_release);
  }
  directory_dirty_ = true;
  return success();
}

result<void> disk_log::reload_producer_state() {
  std::lock_guard producers_lock(producers_mutex_);
  producers_ = producer_state_manager{};
  return load_producer_state();
}

}  // namespace ferry::storage
