#include "replication/partition_manager.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/log.h"
#include "replication/errc.h"
#include "storage/errc.h"

namespace ferry::replication {

partition_manager::partition_manager(storage::log_manager& logs, const config::broker_config& config,
                                     metrics::broker_metrics& metrics)
    : logs_(logs),
      config_(config),
      metrics_(metrics),
      checkpointed_high_watermarks_(logs.read_checkpoint(storage::high_watermark_checkpoint)) {}

std::shared_ptr<partition> partition_manager::open(const topic_partition& tp, const config::topic_settings& settings,
                                                   const std::string& topic_id) {
  auto log = logs_.create(tp, to_log_config(settings), topic_id);
  if (!log && log.error() == storage::errc::topic_id_mismatch) {
    // The log on disk is an older topic's of the same name. Deleted if we saw that topic being deleted, kept
    // aside otherwise; the new topic starts with an empty log.
    const bool deleted = doomed_topics_.contains(tp.topic);
    FERRY_LOG(warn, "replication") << "the log of " << tp << " on disk belongs to topic id " << logs_.topic_id(tp)
                                   << ", not " << topic_id << "; " << (deleted ? "deleting" : "setting aside") << " it";
    if (auto moved = deleted ? logs_.remove(tp) : logs_.set_aside(tp); !moved) {
      FERRY_LOG(error, "replication") << "cannot move the old log of " << tp << ": " << moved.error().message();
      return nullptr;
    }
    log = logs_.create(tp, to_log_config(settings), topic_id);
  }
  if (!log) {
    FERRY_LOG(error, "replication") << "cannot open the log of " << tp << ": " << log.error().message();
    return nullptr;
  }
  const auto checkpointed = checkpointed_high_watermarks_.find(tp);
  return std::make_shared<partition>(
      tp, std::move(log.value()), settings, metrics_.for_topic(tp.topic),
      checkpointed == checkpointed_high_watermarks_.end() ? offset{0} : checkpointed->second);
}

void partition_manager::retire(const topic_partition& tp, const coord::cluster_view& view,
                               const std::shared_ptr<partition>& hosted) {
  // Fetches waiting on it find out at once that it is gone, instead of at their max wait.
  if (hosted) hosted->notify_waiters();
  const auto* topic = view.find_topic(tp.topic);
  // Only two signals delete data: the topic was marked for deletion and is gone, or the topic's assignment
  // (readable, since invalid topics keep their partitions) moved this partition's replica elsewhere.
  const bool deleted_topic = doomed_topics_.contains(tp.topic) && (topic == nullptr || topic->marked_for_deletion);
  const bool moved_away = !deleted_topic && topic != nullptr && topic->partitions.contains(tp.partition);
  if (deleted_topic || moved_away) {
    if (const auto removed = logs_.remove(tp); !removed)
      FERRY_LOG(error, "replication") << "cannot delete the log of " << tp << ": " << removed.error().message();
    else
      FERRY_LOG(info, "replication") << "deleted the log of " << tp
                                     << (deleted_topic ? " (its topic was deleted)" : " (its replica moved away)");
  } else if (const auto kept = logs_.set_aside(tp); !kept) {
    FERRY_LOG(error, "replication") << "cannot set the log of " << tp << " aside: " << kept.error().message();
  }
  metrics_.forget_partition(tp.topic, tp.partition.value());
}

void partition_manager::reconcile(const coord::cluster_view& view) {
  const broker_id self{config_.broker_id};
  for (const auto& [name, topic] : view.topics)
    if (topic.marked_for_deletion) doomed_topics_.insert(name);
  std::unordered_map<topic_partition, std::shared_ptr<partition>> next;
  std::vector<topic_partition> opened;
  std::size_t invalid_topics = 0;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [name, topic] : view.topics) {
      if (!topic.valid()) {
        // Its assignment cannot be read: keep what we host of it, leading nothing, and delete nothing.
        ++invalid_topics;
        for (const auto& [tp, p] : partitions_) {
          if (tp.topic != name) continue;
          if (p->is_leader()) p->become_follower(p->epoch());
          next.emplace(tp, p);
        }
        continue;
      }
      if (topic.marked_for_deletion) continue;  // not served any more: its logs are deleted below
      config::topic_settings settings;
      if (auto bad = config::resolve_topic_settings(config_.topic_defaults, topic.config, settings))
        FERRY_LOG(warn, "replication") << "topic '" << name << "' keeps default settings: " << bad->message;
      const std::string topic_id = topic.topic_id.is_zero() ? std::string{} : topic.topic_id.to_string();
      for (const auto& [id, info] : topic.partitions) {
        if (std::find(info.replicas.begin(), info.replicas.end(), self) == info.replicas.end()) continue;
        const topic_partition tp{name, id};
        auto existing = partitions_.find(tp);
        // Hosted, but for an older topic of this name: open() replaces its log.
        if (existing != partitions_.end() && !topic_id.empty()) {
          const auto hosted_id = logs_.topic_id(tp);
          if (!hosted_id.empty() && hosted_id != topic_id) existing = partitions_.end();
        }
        std::shared_ptr<partition> p;
        if (existing != partitions_.end()) {
          p = existing->second;
          if (*p->settings() != settings) p->update_settings(settings);
        } else {
          p = open(tp, settings, topic_id);
          if (!p) continue;
          opened.push_back(tp);
        }
        const leader_epoch epoch = info.state ? info.state->epoch : no_leader_epoch;
        broker_id leader = info.state ? info.state->leader : no_broker;
        // A leadership from before this broker's registration was an earlier run's or session's: its log may
        // hold less than that leader acknowledged, so it waits for the controller's new election instead.
        if (leader == self && view.registered_since(self, *info.state)) leader = no_broker;
        const bool leads = leader == self;
        if (leads) {
          partition::leadership state{epoch, {}, {}, *info.state};
          for (const broker_id r : info.replicas) {
            if (r == self) continue;
            state.followers.push_back(r);
            if (view.shutting_down.contains(r)) state.leaving.push_back(r);
            if (const auto live = view.brokers.find(r); live != view.brokers.end() && view.hosts(r, tp))
              state.live_followers.emplace(r, live->second.epoch);
            if (std::find(info.state->isr.begin(), info.state->isr.end(), r) != info.state->isr.end())
              state.isr_followers.push_back(r);
          }
          const bool was_leading = p->is_leader() && p->epoch() == epoch;
          if (!was_leading || p->current_leadership() != state) p->become_leader(state);
          if (!was_leading) FERRY_LOG(info, "replication") << "leading " << tp << " in epoch " << epoch;
        } else if (p->is_leader() || p->epoch() != epoch || p->leader() != leader) {
          p->become_follower(epoch, leader);
        }
        next.emplace(tp, std::move(p));
      }
    }
  }
  std::unordered_map<topic_partition, std::shared_ptr<partition>> previous;
  {
    std::unique_lock lock(mutex_);
    previous = std::exchange(partitions_, next);
  }
  for (const auto& tp : opened) FERRY_LOG(info, "replication") << "hosting " << tp;
  // Every log on disk that no assignment hosts here any more (and, at the first view, those found at startup).
  for (const auto& tp : logs_.partitions()) {
    if (next.contains(tp)) continue;
    const auto hosted = previous.find(tp);
    retire(tp, view, hosted == previous.end() ? nullptr : hosted->second);
    if (view.find_topic(tp.topic) == nullptr) metrics_.forget_topic(tp.topic);
  }
  // A deleted topic's name may come back as a new topic: from then on it is that one.
  for (auto it = doomed_topics_.begin(); it != doomed_topics_.end();) {
    const auto* topic = view.find_topic(*it);
    it = topic == nullptr || !topic->marked_for_deletion ? doomed_topics_.erase(it) : std::next(it);
  }
  metrics_.invalid_topics().Set(static_cast<double>(invalid_topics));
  metrics_.stray_logs().Set(static_cast<double>(logs_.stray_logs()));
  in_line_with_live_view_.store(view.is_live(self));
}

std::vector<std::string> partition_manager::deletions_done(const coord::cluster_view& view) const {
  const broker_id self{config_.broker_id};
  std::set<std::string, std::less<>> with_logs;
  for (const auto& tp : logs_.partitions()) with_logs.insert(tp.topic);
  std::vector<std::string> done;
  for (const auto& [name, topic] : view.topics) {
    if (!topic.marked_for_deletion || with_logs.contains(name)) continue;
    const auto replica_here = [&](const auto& entry) {
      const auto& replicas = entry.second.replicas;
      return std::find(replicas.begin(), replicas.end(), self) != replicas.end();
    };
    if (std::any_of(topic.partitions.begin(), topic.partitions.end(), replica_here)) done.push_back(name);
  }
  return done;
}

result<std::shared_ptr<partition>> partition_manager::leader_for(const topic_partition& tp) const {
  std::shared_lock lock(mutex_);
  const auto it = partitions_.find(tp);
  if (it == partitions_.end()) return errc::unknown_partition;
  if (!it->second->is_leader()) return errc::not_leader;
  return it->second;
}

result<std::shared_ptr<partition>> partition_manager::replica_for(const topic_partition& tp) const {
  std::shared_lock lock(mutex_);
  const auto it = partitions_.find(tp);
  if (it == partitions_.end()) return errc::unknown_partition;
  return it->second;
}

std::vector<std::shared_ptr<partition>> partition_manager::all() const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<partition>> out;
  out.reserve(partitions_.size());
  for (const auto& [tp, p] : partitions_) out.push_back(p);
  return out;
}

std::vector<partition_manager::log_dir_usage> partition_manager::log_dir_usages() const {
  std::vector<log_dir_usage> out;
  for (const auto& dir : logs_.dirs()) {
    auto& usage = out.emplace_back();
    usage.path = dir->path().string();
    usage.offline = dir->offline();
    if (dir->free_bytes() != UINT64_MAX) usage.free_bytes = dir->free_bytes();
  }
  std::unordered_map<topic_partition, std::size_t> dir_of;
  for (const auto& [tp, dir] : logs_.placements()) dir_of.emplace(tp, dir);
  for (const auto& p : all()) {
    const auto dir = dir_of.find(p->id());
    if (dir == dir_of.end() || dir->second >= out.size()) continue;
    const auto lag = p->high_watermark().value() - p->log_end_offset().value();
    out[dir->second].logs.push_back(
        {p->id(), static_cast<std::int64_t>(p->log().size_bytes()), std::max<std::int64_t>(lag, 0)});
  }
  return out;
}

std::optional<std::string> partition_manager::storage_problem() const {
  std::string why;
  for (const auto& dir : logs_.dirs()) {
    if (!dir->offline() && !dir->full()) return std::nullopt;
    if (!why.empty()) why += "; ";
    why += "log dir " + dir->path().string() + (dir->offline() ? " is offline" : " is full");
  }
  return why;
}

void partition_manager::apply_retention() {
  for (const auto& p : all()) {
    const auto deleted = p->apply_retention();
    if (!deleted)
      FERRY_LOG(warn, "replication") << "retention of " << p->id() << " failed: " << deleted.error().message();
  }
}

void partition_manager::expire_producers() {
  std::size_t expired = 0;
  for (const auto& p : all()) expired += p->log().expire_producers(config_.producer_id_expiration_ms);
  if (expired > 0)
    FERRY_LOG(info, "replication") << "forgot " << expired << " producers idle for producer.id.expiration.ms ("
                                   << config_.producer_id_expiration_ms << " ms)";
}

void partition_manager::flush_by_time() {
  for (const auto& p : all())
    if (const auto flushed = p->flush_by_time(); !flushed)
      FERRY_LOG(warn, "replication") << "flushing " << p->id() << " failed: " << flushed.error().message();
}

void partition_manager::update_isrs(isr_writer& writer, std::int64_t now_ms) {
  for (const auto& p : all()) {
    auto change = p->wanted_isr_change(now_ms, config_.replica_lag_time_max_ms);
    if (!change) continue;
    const auto before = change->expected.isr;
    const auto written = writer.alter_isr(p->id(), change->expected, change->isr);
    if (!written) {
      // A newer state (another leader, or the controller's own ISR change) won: the next view brings it.
      FERRY_LOG(info, "replication") << p->id() << ": ISR change not written: " << written.error().message();
      p->isr_change_failed();
      continue;
    }
    const bool expanded = change->isr.size() > before.size();
    (expanded ? metrics_.replication().isr_expands() : metrics_.replication().isr_shrinks()).Increment();
    FERRY_LOG(info, "replication") << p->id() << ": ISR " << (expanded ? "expanded" : "shrank") << " from "
                                   << before.size() << " to " << change->isr.size() << " replicas";
  }
}

void partition_manager::checkpoint() {
  storage::offset_map high_watermarks;
  for (const auto& p : all()) high_watermarks[p->id()] = p->high_watermark();
  if (auto written = logs_.write_checkpoint(storage::high_watermark_checkpoint, high_watermarks); !written)
    FERRY_LOG(warn, "replication") << "writing the high watermark checkpoint failed: " << written.error().message();
  storage::offset_map log_starts;
  for (const auto& p : all()) log_starts[p->id()] = p->log_start_offset();
  if (auto written = logs_.write_checkpoint(storage::log_start_checkpoint, log_starts); !written)
    FERRY_LOG(warn, "replication") << "writing the log start offset checkpoint failed: " << written.error().message();
  if (auto written = logs_.checkpoint_recovery_points(); !written)
    FERRY_LOG(warn, "replication") << "writing the recovery point checkpoint failed: " << written.error().message();
}

void partition_manager::refresh_metrics() {
  const auto hosted = all();
  std::size_t waiters = 0;
  for (const auto& p : hosted) waiters += p->waiter_count();
  metrics_.fetch_waiters().Set(static_cast<double>(waiters));
  std::size_t offline = 0;
  for (const auto& dir : logs_.dirs()) {
    const auto name = dir->path().string();
    offline += dir->offline() ? 1 : 0;
    metrics_.log_dir_offline(name).Set(dir->offline() ? 1 : 0);
    metrics_.log_dir_full(name).Set(dir->full() ? 1 : 0);
    if (dir->free_bytes() != UINT64_MAX) metrics_.log_dir_free_bytes(name).Set(static_cast<double>(dir->free_bytes()));
    if (dir->total_bytes() != UINT64_MAX)
      metrics_.log_dir_total_bytes(name).Set(static_cast<double>(dir->total_bytes()));
  }
  metrics_.log_dirs_offline().Set(static_cast<double>(offline));
  metrics_.stray_logs().Set(static_cast<double>(logs_.stray_logs()));
  std::size_t led = 0;
  std::size_t under_replicated = 0;
  std::size_t under_min_isr = 0;
  std::vector<metrics::follower_lag> lags;
  for (const auto& p : hosted) {
    const auto& tp = p->id();
    if (p->is_leader()) {
      ++led;
      const auto followers = p->follower_lags();  // one per follower, in the ISR or not
      const auto isr = p->in_sync_replicas();
      if (isr < 1 + followers.size()) ++under_replicated;
      if (std::cmp_less(isr, p->settings()->min_insync_replicas)) ++under_min_isr;
      for (const auto& lag : followers)
        lags.push_back({tp.topic, tp.partition.value(), lag.follower.value(), lag.records, lag.bytes});
    }
    metrics_.partition_log_size(tp.topic, tp.partition.value()).Set(static_cast<double>(p->log().size_bytes()));
    metrics_.partition_log_end_offset(tp.topic, tp.partition.value())
        .Set(static_cast<double>(p->log_end_offset().value()));
    metrics_.partition_log_start_offset(tp.topic, tp.partition.value())
        .Set(static_cast<double>(p->log_start_offset().value()));
  }
  auto& replication = metrics_.replication();
  replication.partitions().Set(static_cast<double>(hosted.size()));
  replication.leader_partitions().Set(static_cast<double>(led));
  replication.under_replicated_partitions().Set(static_cast<double>(under_replicated));
  replication.under_min_isr_partitions().Set(static_cast<double>(under_min_isr));
  replication.set_follower_lags(lags);
}

result<void> partition_manager::close_all() {
  std::vector<std::shared_ptr<partition>> closing;
  {
    std::unique_lock lock(mutex_);
    for (auto& [tp, p] : partitions_) closing.push_back(p);
    partitions_.clear();
  }
  // The high watermarks survive the restart; the logs' recovery points are written by their shutdown.
  storage::offset_map high_watermarks;
  for (const auto& p : closing) high_watermarks[p->id()] = p->high_watermark();
  if (auto written = logs_.write_checkpoint(storage::high_watermark_checkpoint, high_watermarks); !written)
    FERRY_LOG(warn, "replication") << "writing the high watermark checkpoint failed: " << written.error().message();
  return logs_.shutdown();
}

}  // namespace ferry::replication
