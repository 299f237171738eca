#include "replication/partition_manager.h"

#include <algorithm>

#include "base/log.h"
#include "replication/errc.h"

namespace ferry::replication {

partition_manager::partition_manager(storage::log_manager& logs, const config::broker_config& config,
                                     metrics::broker_metrics& metrics)
    : logs_(logs), config_(config), metrics_(metrics) {}

std::shared_ptr<partition> partition_manager::open(const topic_partition& tp, const config::topic_settings& settings) {
  auto log = logs_.create(tp, to_log_config(settings));
  if (!log) {
    FERRY_LOG(error, "replication") << "cannot open the log of " << tp << ": " << log.error().message();
    return nullptr;
  }
  return std::make_shared<partition>(tp, std::move(log.value()), settings, metrics_.for_topic(tp.topic));
}

void partition_manager::drop(const topic_partition& tp) {
  if (const auto removed = logs_.remove(tp); !removed)
    FERRY_LOG(error, "replication") << "cannot delete the log of " << tp << ": " << removed.error().message();
  else
    FERRY_LOG(info, "replication") << "deleted the log of " << tp;
  metrics_.forget_partition(tp.topic, tp.partition.value());
}

void partition_manager::reconcile(const coord::cluster_view& view) {
  const broker_id self{config_.broker_id};
  std::unordered_map<topic_partition, std::shared_ptr<partition>> next;
  std::vector<topic_partition> opened;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [name, topic] : view.topics) {
      config::topic_settings settings;
      if (auto bad = config::resolve_topic_settings(config_.topic_defaults, topic.config, settings))
        FERRY_LOG(warn, "replication") << "topic '" << name << "' keeps default settings: " << bad->message;
      for (const auto& [id, info] : topic.partitions) {
        if (std::find(info.replicas.begin(), info.replicas.end(), self) == info.replicas.end()) continue;
        const topic_partition tp{name, id};
        auto existing = partitions_.find(tp);
        std::shared_ptr<partition> p;
        if (existing != partitions_.end()) {
          p = existing->second;
          if (*p->settings() != settings) p->update_settings(settings);
        } else {
          p = open(tp, settings);
          if (!p) continue;
          opened.push_back(tp);
        }
        const leader_epoch epoch = info.state ? info.state->epoch : no_leader_epoch;
        const bool leads = info.state && info.state->leader == self;
        if (leads && (!p->is_leader() || p->epoch() != epoch)) {
          p->become_leader(epoch);
          FERRY_LOG(info, "replication") << "leading " << tp << " in epoch " << epoch;
        } else if (!leads && (p->is_leader() || p->epoch() != epoch)) {
          p->become_follower(epoch);
        }
        next.emplace(tp, std::move(p));
      }
    }
  }
  std::vector<topic_partition> gone;
  {
    std::unique_lock lock(mutex_);
    for (const auto& [tp, p] : partitions_)
      if (!next.contains(tp)) gone.push_back(tp);
    partitions_ = std::move(next);
  }
  for (const auto& tp : opened) FERRY_LOG(info, "replication") << "hosting " << tp;
  for (const auto& tp : gone) {
    drop(tp);
    if (view.find_topic(tp.topic) == nullptr) metrics_.forget_topic(tp.topic);
  }
}

result<std::shared_ptr<partition>> partition_manager::leader_for(const topic_partition& tp) const {
  std::shared_lock lock(mutex_);
  const auto it = partitions_.find(tp);
  if (it == partitions_.end()) return errc::unknown_partition;
  if (!it->second->is_leader()) return errc::not_leader;
  return it->second;
}

std::vector<std::shared_ptr<partition>> partition_manager::all() const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<partition>> out;
  out.reserve(partitions_.size());
  for (const auto& [tp, p] : partitions_) out.push_back(p);
  return out;
}

void partition_manager::apply_retention() {
  for (const auto& p : all()) {
    const auto deleted = p->apply_retention();
    if (!deleted)
      FERRY_LOG(warn, "replication") << "retention of " << p->id() << " failed: " << deleted.error().message();
  }
}

void partition_manager::flush_by_time() {
  for (const auto& p : all())
    if (const auto flushed = p->flush_by_time(); !flushed)
      FERRY_LOG(warn, "replication") << "flushing " << p->id() << " failed: " << flushed.error().message();
}

void partition_manager::refresh_metrics() {
  for (const auto& p : all()) {
    const auto& tp = p->id();
    metrics_.partition_log_size(tp.topic, tp.partition.value()).Set(static_cast<double>(p->log().size_bytes()));
    metrics_.partition_log_end_offset(tp.topic, tp.partition.value())
        .Set(static_cast<double>(p->log_end_offset().value()));
    metrics_.partition_log_start_offset(tp.topic, tp.partition.value())
        .Set(static_cast<double>(p->log_start_offset().value()));
  }
}

result<void> partition_manager::close_all() {
  std::unique_lock lock(mutex_);
  partitions_.clear();
  return logs_.shutdown();
}

}  // namespace ferry::replication
