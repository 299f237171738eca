#include "follower/fetcher_manager.h"

#include <algorithm>

#include "base/log.h"

namespace ferry::follower {

fetcher_manager::fetcher_manager(broker_id self, replication::partition_manager& partitions,
                                 replication::replication_quota& quota, fetch_settings settings)
    : self_(self),
      partitions_(partitions),
      quota_(quota),
      settings_(settings),
      work_(boost::asio::make_work_guard(io_)),
      thread_([this] { io_.run(); }) {}

fetcher_manager::~fetcher_manager() { stop(); }

bool fetcher_manager::throttled_here(const coord::cluster_view& view, const replication::partition& partition) const {
  const auto& id = partition.id();
  if (!partition.settings()->follower_replication_throttled_replicas.covers(id.partition.value(), self_.value()))
    return false;
  const auto* known = view.find_partition(id);
  if (known == nullptr || !known->state) return true;
  const auto& isr = known->state->isr;
  return std::find(isr.begin(), isr.end(), self_) == isr.end();
}

void fetcher_manager::update(const coord::cluster_view& view) {
  std::map<broker_id, std::vector<replica_fetcher::follow>> by_leader;
  for (auto& partition : partitions_.all()) {
    const broker_id leader = partition->leader();
    if (partition->is_leader() || leader == no_broker || leader == self_) continue;
    const bool throttled = throttled_here(view, *partition);
    by_leader[leader].push_back({std::move(partition), throttled});
  }
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  for (auto it = fetchers_.begin(); it != fetchers_.end();) {
    const auto wanted = by_leader.find(it->first);
    const auto address = view.brokers.find(it->first);
    const bool moved = address == view.brokers.end() ||
                       it->second->leader() != leader_address{it->first, address->second.host,
                                                              static_cast<std::uint16_t>(address->second.port)};
    if (wanted == by_leader.end() || moved) {
      it->second->stop();
      it = fetchers_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [leader, followed] : by_leader) {
    auto& fetcher = fetchers_[leader];
    if (!fetcher) {
      const auto address = view.brokers.find(leader);
      if (address == view.brokers.end()) {
        fetchers_.erase(leader);  // not registered (yet): the view that registers it brings it back here
        continue;
      }
      fetcher = std::make_shared<replica_fetcher>(
          io_, self_, leader_address{leader, address->second.host, static_cast<std::uint16_t>(address->second.port)},
          settings_, quota_);
      fetcher->start();
      FERRY_LOG(info, "follower") << "fetching " << followed.size() << " partitions from broker " << leader << " at "
                                  << address->second.host << ":" << address->second.port;
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
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ferry::follower
