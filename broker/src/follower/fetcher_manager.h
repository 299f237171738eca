#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "coord/cluster_view.h"
#include "follower/replica_fetcher.h"
#include "replication/partition_manager.h"

namespace ferry::follower {

// The replica fetchers of this broker: num.replica.fetchers per leader broker it follows partitions from (each
// with its own connection, a partition always with the same one of them), on as many threads of their own (disk
// writes and truncations included, never on a network thread): fetcher i of every leader runs on thread i.
// update() runs after each partition_manager::reconcile and hands each fetcher the partitions that now follow
// its broker.
class fetcher_manager {
 public:
  // `quota`: follower.replication.throttled.rate, which every fetcher's throttled partitions share.
  fetcher_manager(broker_id self, replication::partition_manager& partitions, replication::replication_quota& quota,
                  fetch_settings settings = {}, int fetchers_per_leader = 1);
  ~fetcher_manager();
  fetcher_manager(const fetcher_manager&) = delete;
  fetcher_manager& operator=(const fetcher_manager&) = delete;

  void update(const coord::cluster_view& view);
  // Stops every fetcher and the thread; later updates do nothing.
  void stop();

 private:
  // How to follow `partition`: whether it counts against the follower throttle, and whether it is in sync.
  [[nodiscard]] replica_fetcher::follow follow_of(const coord::cluster_view& view,
                                                  std::shared_ptr<replication::partition> partition) const;
  // Which of a leader's fetchers follows `tp`.
  [[nodiscard]] std::size_t fetcher_index(const topic_partition& tp) const;

  // A leader broker's fetcher number `index`.
  using fetcher_key = std::pair<broker_id, std::size_t>;
  // One thread and its event loop, for fetcher number i of every leader.
  struct worker {
    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{boost::asio::make_work_guard(io)};
    std::thread thread;
  };

  const broker_id self_;
  replication::partition_manager& partitions_;
  replication::replication_quota& quota_;
  const fetch_settings settings_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::mutex mutex_;
  bool stopped_ = false;                                              // guarded by mutex_
  std::map<fetcher_key, std::shared_ptr<replica_fetcher>> fetchers_;  // guarded by mutex_
};

}  // namespace ferry::follower
