#include "follower/fetcher_manager.h"

#include "base/log.h"

namespace ferry::follower {

fetcher_manager::fetcher_manager(broker_id self, replication::partition_manager& partitions, fetch_settings settings)
    : self_(self),
      partitions_(partitions),
      settings_(settings),
      work_(boost::asio::make_work_guard(io_)),
      thread_([this] { io_.run(); }) {}

fetcher_manager::~fetcher_manager() { stop(); }

void fetcher_manager::update(const coord::cluster_view& view) {
  std::map<broker_id, std::vector<std::shared_ptr<replication::partition>>> by_leader;
  for (auto& partition : partitions_.all()) {
    const broker_id leader = partition->leader();
    if (partition->is_leader() || leader == no_broker || leader == self_) continue;
    by_leader[leader].push_back(std::move(partition));
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
          settings_);
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
