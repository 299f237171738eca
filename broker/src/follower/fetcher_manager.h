#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "coord/cluster_view.h"
#include "follower/replica_fetcher.h"
#include "replication/partition_manager.h"

namespace ferry::follower {

// The replica fetchers of this broker: one per leader broker it follows partitions from, all on one thread
// of their own (disk writes and truncations included, never on a network thread). update() runs after each
// partition_manager::reconcile and hands each fetcher the partitions that now follow its broker.
class fetcher_manager {
 public:
  // `quota`: follower.replication.throttled.rate, which every fetcher's throttled partitions share.
  fetcher_manager(broker_id self, replication::partition_manager& partitions, replication::replication_quota& quota,
                  fetch_settings settings = {});
  ~fetcher_manager();
  fetcher_manager(const fetcher_manager&) = delete;
  fetcher_manager& operator=(const fetcher_manager&) = delete;

  void update(const coord::cluster_view& view);
  // Stops every fetcher and the thread; later updates do nothing.
  void stop();

 private:
  // Whether following `partition` counts against the follower throttle (replica_fetcher::follow).
  [[nodiscard]] bool throttled_here(const coord::cluster_view& view, const replication::partition& partition) const;

  const broker_id self_;
  replication::partition_manager& partitions_;
  replication::replication_quota& quota_;
  const fetch_settings settings_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
  std::mutex mutex_;
  bool stopped_ = false;                                            // guarded by mutex_
  std::map<broker_id, std::shared_ptr<replica_fetcher>> fetchers_;  // guarded by mutex_
};

}  // namespace ferry::follower
