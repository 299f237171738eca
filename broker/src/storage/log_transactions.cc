// A partition log's transactions: markers, the last stable offset and the aborted transactions of
// read_committed fetches.
#include "base/log.h"
#include "storage/disk_log.h"

namespace ferry::storage {

result<append_result> disk_log::append_marker(producer_id producer, producer_epoch epoch, model::txn_marker marker,
                                              leader_epoch leader) {
  auto batch = model::build_marker_batch(producer, epoch, marker, clock_.now_ms());
  std::lock_guard lock(write_mutex_);
  if (closed_) return errc::log_closed;
  if (dir_->offline()) return offline_error();
  {
    std::lock_guard producers_lock(producers_mutex_);
    FERRY_TRY(producers_.check_marker(producer, epoch, marker.coordinator_epoch));
  }
  has_transactions_.store(true, std::memory_order_release);
  FERRY_TRY(auto written, write_locked(batch, leader));
  std::lock_guard producers_lock(producers_mutex_);
  FERRY_TRY(note_marker(model::batch_header_view(batch), batch, *segments_.back()));
  return written;
}

result<void> disk_log::note_marker(const model::batch_header_view& header, std::span<const std::byte> batch,
                                   segment& holder) {
  const auto marker = model::read_marker(batch);
  if (!marker) {
    // Not a transaction marker (a control batch of a kind Ferry does not write): it ends nothing.
    FERRY_LOG(warn, "storage") << directory_.string() << ": the control batch at offset " << header.base_offset()
                               << " is not a transaction marker (" << marker.error().message() << ")";
    return success();
  }
  const auto ended = producers_.complete(header, marker.value());
  if (!ended || !ended->aborted) return success();
  const aborted_txn entry{ended->producer, ended->first, ended->last,
                          producers_.first_open_txn().value_or(next(ended->last))};
  has_aborted_.store(true, std::memory_order_release);
  if (auto added = holder.add_aborted(entry); !added)
    return io_failed("writing the transaction index of segment " + std::to_string(holder.base_offset().value()),
                     added.error());
  return success();
}

offset disk_log::last_stable_offset(offset high_watermark) {
  if (!has_transactions_.load(std::memory_order_acquire)) return high_watermark;
  std::lock_guard lock(producers_mutex_);
  const auto unstable = producers_.first_unstable_offset(high_watermark);
  return unstable ? std::min(*unstable, high_watermark) : high_watermark;
}

result<std::vector<aborted_txn>> disk_log::aborted_transactions(offset from, offset upto) {
  if (dir_->offline()) return offline_error();
  std::vector<aborted_txn> out;
  if (!has_aborted_.load(std::memory_order_acquire)) return out;
  std::shared_ptr<segment> seg;
  {
    std::shared_lock lock(segments_mutex_);
    seg = segment_for(std::max(from, log_start_offset()));
  }
  // On to later segments until an entry's last stable offset reaches `upto` (as Kafka does): a transaction that
  // starts in the range may have its abort marker, and so its entry, much further on.
  bool complete = false;
  while (seg && !complete) {
    if (auto collected = seg->collect_aborted(from, upto, out, complete); !collected)
      return io_failed("reading the transaction index of segment " + std::to_string(seg->base_offset().value()),
                       collected.error());
    std::shared_lock lock(segments_mutex_);
    seg = segment_after(*seg);
  }
  return out;
}

}  // namespace ferry::storage
