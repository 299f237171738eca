#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/guarded.h"
#include "replication/partition.h"

namespace ferry::server::handlers {

// Wakes a request that waits on partitions (a long-polling fetch, a produce waiting for acks=all) when any of
// them gets data or a new high watermark: the timer runs on the connection's thread, and the thread that
// appended or moved the high watermark only posts a cancel to it.
class partition_waiter final : public replication::data_waiter, public std::enable_shared_from_this<partition_waiter> {
 public:
  explicit partition_waiter(const boost::asio::any_io_executor& executor) : timer(executor) {}
  void notify() override {
    boost::asio::post(timer.get_executor(),
                      guarded("waking a waiting request", [self = shared_from_this()] { self->timer.cancel(); }));
  }
  boost::asio::steady_timer timer;
};

// The partitions a request waits on, from before its first look until it answers: registering first means a
// change between a look and the wait is never missed, and leaving at the end means idle partitions keep no
// entries of requests long answered.
class waiting_on {
 public:
  explicit waiting_on(std::shared_ptr<partition_waiter> waiter) : waiter_(std::move(waiter)) {}
  waiting_on(const waiting_on&) = delete;
  waiting_on& operator=(const waiting_on&) = delete;
  ~waiting_on() {
    for (const auto& p : partitions_) p->remove_waiter(waiter_);
  }
  void add(const std::shared_ptr<replication::partition>& p) {
    if (std::find(partitions_.begin(), partitions_.end(), p) != partitions_.end()) return;
    p->add_waiter(waiter_);
    partitions_.push_back(p);
  }

 private:
  std::shared_ptr<partition_waiter> waiter_;
  std::vector<std::shared_ptr<replication::partition>> partitions_;
};

}  // namespace ferry::server::handlers
