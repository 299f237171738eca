#include "follower/fetcher_manager.h"

#include <algorithm>
#include <functional>
#include <string>

#include "base/log.h"

namespace ferry::follower {

fetcher_manager::fetcher_manager(broker_id self, replication::partition_manager& partitions,
                                 replication::replication_quota& quota, fetch_settings settings,
                                 int fetchers_per_leader)
    : self_(self), partitions_(partitions), quota_(quota), settings_(settings) {
  for (int i = 0; i < std::max(1, fetchers_per_leader); ++i) {
    auto& w = workers_.emplace_back(std::make_unique<worker>());
    w->thread = std::thread([&io = w->io] { io.run(); });
  }
}

std::size_t fetcher_manager::fetcher_index(const topic_partition& tp) const {
  // As Kafka spreads partitions over its fetcher threads: by a hash of topic and partition.
  const std::size_t hash = std::hash<std::string>{}(tp.topic) * 31 + static_cast<std::size_t>(tp.partition.value());
  return hash % workers_.size();
}

fetcher_manager::~fetcher_manager() { stop(); }

replica_fetcher::follow fetcher_manager::follow_of(const coord::cluster_view& view,
                                                   std::shared_ptr<replication::partition> partition) const {
  const auto& id = partition->id();
  const bool throttled =
      partition->settings()->follower_replication_throttled_replicas.covers(id.partition.value(), self_.value());
  const auto* known = view.find_partition(id);
  const bool in_sync = known != nullptr && known->state &&
                       std::find(known->state->isr.begin(), known->state->isr.end(), self_) != known->state->isr.end();
  return {std::move(partition), throttled, in_sync};
}

void fetcher_manager::update(const coord::cluster_view& view) {
  std::map<fetcher_key, std::vector<replica_fetcher::follow>> by_fetcher;
  for (auto& partition : partitions_.all()) {
    const broker_id leader = partition->leader();
    if (partition->is_leader() || leader == no_broker || leader == self_) continue;
    const auto index = fetcher_index(partition->id());
    by_fetcher[{leader, index}].push_back(follow_of(view, std::move(partition)));
  }
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  for (auto it = fetchers_.begin(); it != fetchers_.end();) {
    const broker_id leader = it->first.first;
    const auto wanted = by_fetcher.find(it->first);
    const auto address = view.brokers.find(leader);
    const bool moved = address == view.brokers.end() ||
                       it->second->leader() != leader_address{leader, address->second.host,
                                                              static_cast<std::uint16_t>(address->second.port)};
    if (wanted == by_fetcher.end() || moved) {
      it->second->stop();
      it = fetchers_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [key, followed] : by_fetcher) {
    const auto& [leader, index] = key;
    auto& fetcher = fetchers_[key];
    if (!fetcher) {
      const auto address = view.brokers.find(leader);
      if (address == view.brokers.end()) {
        fetchers_.erase(key);  // not registered (yet): the view that registers it brings it back here
        continue;
      }
      fetcher = std::make_shared<replica_fetcher>(
          workers_[index]->io, self_,
          leader_address{leader, address->second.host, static_cast<std::uint16_t>(address->second.port)}, settings_,
          quota_);
      fetcher->start();
      FERRY_LOG(info, "follower") << "fetcher " << index << " fetching " << followed.size()
                                  << " partitions from broker " << leader << " at " << address->second.host << ":"
                                  << address->second.port;
    }
    fetcher->set_partitions(followed);
  }
}

void fetcher_manager::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& [leader, fetcher] : fetchers_) fetcher->stop();
    fetchers_.clear();
  }
  for (auto& w : workers_) {
    w->work.reset();
    w->io.stop();
    if (w->thread.joinable()) w->thread.join();
  }
}

}  // namespace ferry::follower
