#include "replication/partition.h"

#include "replication/errc.h"

namespace ferry::replication {

partition::partition(topic_partition id, std::shared_ptr<storage::log> log, config::topic_settings settings,
                     metrics::topic_metrics counters)
    : id_(std::move(id)),
      log_(std::move(log)),
      settings_(std::make_shared<const config::topic_settings>(std::move(settings))),
      counters_(counters),
      high_watermark_(log_->log_end_offset().value()) {}

void partition::update_settings(config::topic_settings settings) {
  std::lock_guard lock(append_mutex_);  // the log's config changes between appends, never during one
  log_->update_config(to_log_config(settings));
  settings_.store(std::make_shared<const config::topic_settings>(std::move(settings)));
}

storage::log_config to_log_config(const config::topic_settings& settings) {
  storage::log_config c;
  c.segment_bytes = settings.segment_bytes;
  c.segment_ms = settings.segment_ms;
  c.retention_ms = settings.retention_ms;
  c.retention_bytes = settings.retention_bytes;
  c.index_interval_bytes = settings.index_interval_bytes;
  c.segment_index_bytes = settings.segment_index_bytes;
  c.flush_messages = settings.flush_messages;
  c.flush_ms = settings.flush_ms;
  c.max_message_bytes = settings.max_message_bytes;
  c.log_append_time = settings.message_timestamp_type == "LogAppendTime";
  c.file_delete_delay_ms = settings.file_delete_delay_ms;
  return c;
}

void partition::become_leader(leader_epoch epoch) {
  epoch_.store(epoch.value());
  leader_.store(true);
}

void partition::become_follower(leader_epoch epoch) {
  epoch_.store(epoch.value());
  leader_.store(false);
}

result<storage::append_result> partition::append(std::span<std::byte> batch) {
  std::unique_lock lock(append_mutex_);
  if (!leader_.load()) return errc::not_leader;
  FERRY_TRY(auto appended, log_->append(batch, epoch()));
  // The only replica: an append is committed as soon as it is in the log.
  high_watermark_.store(log_->log_end_offset().value());
  lock.unlock();
  if (!appended.duplicate) notify_waiters();
  return appended;
}

result<storage::read_result> partition::read(offset from, std::uint64_t max_bytes) {
  if (!leader_.load()) return errc::not_leader;
  return log_->read(from, max_bytes, high_watermark());
}

result<std::size_t> partition::apply_retention() {
  std::lock_guard lock(append_mutex_);
  return log_->apply_retention();
}

result<void> partition::flush_by_time() {
  std::lock_guard lock(append_mutex_);
  return log_->maybe_flush_by_time();
}

void partition::wait_for_data(std::weak_ptr<data_waiter> waiter) {
  std::lock_guard lock(waiters_mutex_);
  waiters_.push_back(std::move(waiter));
}

void partition::notify_waiters() {
  std::vector<std::weak_ptr<data_waiter>> woken;
  {
    std::lock_guard lock(waiters_mutex_);
    if (waiters_.empty()) return;
    woken.swap(waiters_);
  }
  for (auto& w : woken)
    if (auto waiter = w.lock()) waiter->notify();
}

}  // namespace ferry::replication
