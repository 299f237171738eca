#include "replication/partition.h"

#include <algorithm>

#include "replication/errc.h"
#include "storage/errc.h"

namespace ferry::replication {

partition::partition(topic_partition id, std::shared_ptr<storage::log> log, config::topic_settings settings,
                     metrics::topic_metrics counters, offset high_watermark)
    : id_(std::move(id)),
      log_(std::move(log)),
      settings_(std::make_shared<const config::topic_settings>(std::move(settings))),
      counters_(counters),
      high_watermark_(std::min(high_watermark, log_->log_end_offset()).value()) {
  log_->set_high_watermark(offset{high_watermark_.load()});
}

void partition::update_settings(config::topic_settings settings) {
  log_->update_config(to_log_config(settings));  // the log applies it between appends, never during one
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
  c.compact = settings.cleanup_policy.find("compact") != std::string::npos;
  c.delete_policy = settings.cleanup_policy.find("delete") != std::string::npos;
  c.delete_retention_ms = settings.delete_retention_ms;
  c.min_compaction_lag_ms = settings.min_compaction_lag_ms;
  c.max_compaction_lag_ms = settings.max_compaction_lag_ms;
  c.min_cleanable_dirty_ratio = settings.min_cleanable_dirty_ratio;
  return c;
}

void partition::become_leader(const leadership& state) {
  {
    std::lock_guard lock(followers_mutex_);
    // A view from before the ISR change in flight (the state znode still has the version the change was
    // written against): the joiners stay counted, since ZooKeeper may already name them and the high
    // watermark must not move without them.
    if (leader_.load() && isr_change_in_flight_ && state.epoch == leadership_.epoch &&
        state.state.zk_version == leadership_.state.zk_version && state.followers == leadership_.followers)
      return;
    if (state.epoch != leadership_.epoch || !leader_.load()) followers_.clear();
    const auto contains = [](const std::vector<broker_id>& set, broker_id b) {
      return std::find(set.begin(), set.end(), b) != set.end();
    };
    // What a follower fetched counts no more once it is not an assigned replica, left the ISR (the controller
    // dropped it, or this leader's shrink was written), is not live, or registered again (restarted): it must
    // fetch again to join.
    std::erase_if(followers_, [&](const auto& entry) {
      const broker_id f = entry.first;
      const auto live = state.live_followers.find(f);
      const auto was_live = leadership_.live_followers.find(f);
      return !contains(state.followers, f) ||
             (contains(leadership_.isr_followers, f) && !contains(state.isr_followers, f)) ||
             live == state.live_followers.end() ||
             (was_live != leadership_.live_followers.end() && was_live->second != live->second);
    });
    leadership_ = state;
    isr_change_in_flight_ = false;
  }
  log_->begin_epoch(state.epoch);
  leader_id_.store(no_broker.value());
  epoch_.store(state.epoch.value());
  leader_.store(true);
  if (advance_high_watermark()) notify_waiters();
}

void partition::become_follower(leader_epoch epoch, broker_id leader) {
  log_->follow();
  leader_id_.store(leader.value());
  {
    std::lock_guard lock(followers_mutex_);
    leadership_ = {};
    followers_.clear();
    isr_change_in_flight_ = false;
  }
  epoch_.store(epoch.value());
  leader_.store(false);
  notify_waiters();  // fetches and acks=all produces waiting here find out
}

std::optional<partition::isr_change> partition::wanted_isr_change(std::int64_t now_ms, std::int64_t lag_max_ms) {
  if (!leader_.load()) return std::nullopt;
  {
    std::lock_guard lock(followers_mutex_);
    if (leadership_.followers.empty()) return std::nullopt;  // a single replica: nothing to look at
  }
  // The start of the current epoch: where the epoch before it ends.
  const offset epoch_start = log_->end_offset_for_epoch(leader_epoch{epoch().value() - 1}).end;
  const offset leader_end = log_->log_end_offset();
  std::lock_guard lock(followers_mutex_);
  if (isr_change_in_flight_) return std::nullopt;
  // Read under the lock every leader-side move of the high watermark takes: it cannot pass a joiner admitted here.
  const offset hw = high_watermark();
  auto isr = leadership_.state.isr;
  bool changed = false;
  for (const broker_id f : leadership_.isr_followers) {
    // An ISR member that never fetched in this epoch is caught up as of now: it gets the full lag to show up.
    auto [progress, fresh] = followers_.try_emplace(f);
    if (fresh) progress->second.last_caught_up_ms = now_ms;
    if (progress->second.log_end != leader_end && now_ms - progress->second.last_caught_up_ms > lag_max_ms) {
      std::erase(isr, f);
      changed = true;
    }
  }
  std::vector<broker_id> joining;
  for (const broker_id f : leadership_.followers) {
    if (std::find(isr.begin(), isr.end(), f) != isr.end() ||
        std::find(leadership_.isr_followers.begin(), leadership_.isr_followers.end(), f) !=
            leadership_.isr_followers.end() ||
        std::find(leadership_.leaving.begin(), leadership_.leaving.end(), f) != leadership_.leaving.end() ||
        !leadership_.live_followers.contains(f))
      continue;
    const auto progress = followers_.find(f);
    if (progress == followers_.end() || progress->second.log_end < hw || progress->second.log_end < epoch_start)
      continue;
    isr.push_back(f);
    joining.push_back(f);
    changed = true;
  }
  if (!changed) return std::nullopt;
  // A joiner holds the high watermark from now on, before the view says it is in (Kafka's maximal ISR).
  for (const broker_id f : joining) leadership_.isr_followers.push_back(f);
  isr_change_in_flight_ = true;
  return isr_change{leadership_.state, std::move(isr)};
}

void partition::isr_change_failed() {
  std::lock_guard lock(followers_mutex_);
  isr_change_in_flight_ = false;
}

std::size_t partition::in_sync_replicas() const {
  if (!leader_.load()) return 0;
  std::lock_guard lock(followers_mutex_);
  return leadership_.state.isr.size();
}

std::vector<partition::follower_lag> partition::follower_lags() const {
  std::vector<follower_lag> out;
  if (!leader_.load()) return out;
  const offset end = log_->log_end_offset();
  std::vector<offset> positions;
  {
    std::lock_guard lock(followers_mutex_);
    for (const broker_id f : leadership_.followers) {
      const auto it = followers_.find(f);
      // Until its first fetch in this leadership a follower is as far behind as it can be.
      const offset at =
          it == followers_.end() || it->second.log_end.value() < 0 ? log_->log_start_offset() : it->second.log_end;
      out.push_back({f, std::max<std::int64_t>(0, end.value() - at.value()), 0});
      positions.push_back(at);
    }
  }
  // Outside the lock: counting bytes may read an index.
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].records == 0) continue;
    if (const auto bytes = log_->size_bytes_from(positions[i])) out[i].bytes = bytes.value();
  }
  return out;
}

std::vector<read_candidate> partition::in_sync_followers() const {
  std::vector<read_candidate> out;
  if (!leader_.load()) return out;
  std::lock_guard lock(followers_mutex_);
  for (const broker_id f : leadership_.isr_followers) {
    const auto it = followers_.find(f);
    if (it == followers_.end() || it->second.log_end.value() < 0) continue;
    out.push_back({f, std::nullopt, it->second.log_end, it->second.last_caught_up_ms});
  }
  return out;
}

bool partition::has_in_sync_follower(broker_id follower) const {
  std::lock_guard lock(followers_mutex_);
  const auto& isr = leadership_.isr_followers;
  return std::find(isr.begin(), isr.end(), follower) != isr.end();
}

partition::leadership partition::current_leadership() const {
  std::lock_guard lock(followers_mutex_);
  return leadership_;
}

bool partition::advance_high_watermark() {
  if (!leader_.load()) return false;
  // Under the followers' lock, also when the leader is alone in the ISR: a joiner is admitted under it too, so
  // the high watermark never passes one (review finding 12).
  std::lock_guard lock(followers_mutex_);
  std::int64_t candidate = log_->visible_end().value();
  for (const broker_id follower : leadership_.isr_followers) {
    const auto known = followers_.find(follower);
    if (known == followers_.end() || known->second.log_end.value() < 0) return false;
    candidate = std::min(candidate, known->second.log_end.value());
  }
  if (candidate <= high_watermark_.load()) return false;
  high_watermark_.store(candidate);
  log_->set_high_watermark(offset{candidate});
  return true;
}

result<storage::append_result> partition::append(std::span<std::byte> batch) {
  if (!leader_.load()) return errc::not_leader;
  FERRY_TRY(auto appended, log_->append(batch, epoch()));
  advance_high_watermark();
  if (!appended.duplicate && !appended.flush_required) notify_waiters();
  return appended;
}

result<storage::append_result> partition::append_from_coordinator(std::span<std::byte> batch) {
  if (!leader_.load()) return errc::not_leader;
  FERRY_TRY(auto appended, log_->append_from_coordinator(batch, epoch()));
  advance_high_watermark();
  if (!appended.flush_required) notify_waiters();
  return appended;
}

result<storage::append_result> partition::append_marker(producer_id producer, producer_epoch epoch,
                                                        model::txn_marker marker) {
  if (!leader_.load()) return errc::not_leader;
  std::lock_guard verifying(verification_mutex_);
  verification_guards_.erase(producer);
  FERRY_TRY(auto appended, log_->append_marker(producer, epoch, marker, this->epoch()));
  advance_high_watermark();
  if (!appended.flush_required) notify_waiters();
  return appended;
}

std::uint64_t partition::begin_txn_verification(producer_id producer) {
  std::lock_guard lock(verification_mutex_);
  const auto guard = ++next_guard_;
  verification_guards_[producer] = guard;
  return guard;
}

result<storage::append_result> partition::append_verified(std::span<std::byte> batch, producer_id producer,
                                                          std::uint64_t guard) {
  std::lock_guard lock(verification_mutex_);
  const auto it = verification_guards_.find(producer);
  if (it == verification_guards_.end() || it->second != guard) return storage::errc::invalid_txn_state;
  verification_guards_.erase(it);
  return append(batch);
}

result<void> partition::flush(offset upto) {
  FERRY_TRY(log_->flush(upto));
  advance_high_watermark();
  notify_waiters();
  return success();
}

result<storage::read_result> partition::read(offset from, std::uint64_t max_bytes, isolation level) {
  if (!leader_.load()) return errc::not_leader;
  return read_any_replica(from, max_bytes, level);
}

result<storage::read_result> partition::read_any_replica(offset from, std::uint64_t max_bytes, isolation level) {
  return log_->read(from, max_bytes, level == isolation::read_committed ? last_stable_offset() : high_watermark());
}

result<storage::read_result> partition::read_for_follower(broker_id follower, offset from, std::uint64_t max_bytes,
                                                          std::int64_t now_ms, offset log_start) {
  if (!leader_.load()) return errc::not_leader;
  {
    std::lock_guard lock(followers_mutex_);
    const auto& followers = leadership_.followers;
    if (std::find(followers.begin(), followers.end(), follower) == followers.end()) return errc::not_leader;
    const offset leader_end = log_->log_end_offset();
    // A fetch offset past the log end is not a log end the follower can have; the read refuses it.
    if (from <= leader_end) {
      auto& progress = followers_[follower];
      // Kafka's Replica.updateFetchState: caught up now if at the log end, or as of its last fetch if it has
      // reached what the log end was then.
      if (from >= leader_end) {
        progress.last_caught_up_ms = std::max(progress.last_caught_up_ms, now_ms);
      } else if (from >= progress.leader_end_at_last_fetch && progress.leader_end_at_last_fetch.value() >= 0) {
        progress.last_caught_up_ms = std::max(progress.last_caught_up_ms, progress.last_fetch_ms);
      }
      progress.log_end = from;
      progress.log_start = log_start;
      progress.leader_end_at_last_fetch = leader_end;
      progress.last_fetch_ms = now_ms;
    }
  }
  if (advance_high_watermark()) notify_waiters();
  return log_->read(from, max_bytes, offset{INT64_MAX});
}

result<storage::append_result> partition::append_from_leader(std::span<const std::byte> batches,
                                                             offset leader_high_watermark) {
  if (leader_.load()) return errc::not_follower;
  FERRY_TRY(auto appended, log_->append_replicated(batches));
  counters_.replication_bytes_in->Increment(static_cast<double>(batches.size()));
  if (appended.flush_required) {
    FERRY_TRY(log_->flush(next(appended.last_offset)));
  }
  follow_high_watermark(leader_high_watermark);
  return appended;
}

void partition::follow_high_watermark(offset leader_high_watermark) {
  const std::int64_t candidate = std::min(leader_high_watermark, log_->log_end_offset()).value();
  std::int64_t current = high_watermark_.load();
  while (candidate > current && !high_watermark_.compare_exchange_weak(current, candidate)) {
  }
  if (candidate > current) {
    log_->set_high_watermark(offset{high_watermark_.load()});
    notify_waiters();  // consumers long-polling this follower (KIP-392)
  }
}

result<void> partition::truncate_to(offset end) {
  if (leader_.load()) return errc::not_follower;
  FERRY_TRY(log_->truncate_to(end));
  const std::int64_t now_end = log_->log_end_offset().value();
  if (high_watermark_.load() > now_end) high_watermark_.store(now_end);
  log_->set_high_watermark(offset{high_watermark_.load()});
  return success();
}

result<void> partition::reset_to(offset start) {
  if (leader_.load()) return errc::not_follower;
  FERRY_TRY(log_->reset_to(start));
  high_watermark_.store(start.value());
  log_->set_high_watermark(start);
  return success();
}

result<std::size_t> partition::apply_retention() { return log_->apply_retention(); }

result<offset> partition::delete_records(offset to) {
  if (!leader_.load()) return errc::not_leader;
  const offset hw = high_watermark();
  if (to.value() == -1) to = hw;
  if (to.value() < 0 || to > hw) return storage::errc::offset_out_of_range;
  FERRY_TRY(const auto start, log_->advance_log_start(to));
  notify_waiters();  // consumers reading below it find out
  return start;
}

offset partition::low_watermark() const {
  offset low = log_->log_start_offset();
  std::lock_guard lock(followers_mutex_);
  for (const broker_id f : leadership_.isr_followers) {
    const auto it = followers_.find(f);
    // A follower that has not said where its log starts holds the low watermark where it is not yet known.
    if (it == followers_.end() || it->second.log_start.value() < 0)
      return offset{std::min<std::int64_t>(low.value(), 0)};
    low = std::min(low, it->second.log_start);
  }
  return low;
}

result<void> partition::follow_log_start(offset leader_log_start) {
  if (leader_.load()) return errc::not_follower;
  const offset to = std::min(leader_log_start, high_watermark());
  if (to <= log_->log_start_offset()) return success();
  FERRY_TRY(log_->advance_log_start(to));
  return success();
}

result<void> partition::flush_by_time() {
  const offset before = high_watermark();
  FERRY_TRY(log_->maybe_flush_by_time());
  advance_high_watermark();
  if (high_watermark() > before) notify_waiters();
  return success();
}

void partition::add_waiter(const std::shared_ptr<data_waiter>& waiter) {
  std::lock_guard lock(waiters_mutex_);
  waiters_.insert(waiter);
}

void partition::remove_waiter(const std::shared_ptr<data_waiter>& waiter) {
  std::lock_guard lock(waiters_mutex_);
  waiters_.erase(waiter);
}

std::size_t partition::waiter_count() const {
  std::lock_guard lock(waiters_mutex_);
  return waiters_.size();
}

void partition::notify_waiters() {
  std::vector<std::shared_ptr<data_waiter>> woken;
  {
    std::lock_guard lock(waiters_mutex_);
    if (waiters_.empty()) return;
    woken.assign(waiters_.begin(), waiters_.end());
  }
  for (const auto& w : woken) w->notify();
}

}  // namespace ferry::replication
