#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace ferry::kube {

// When a deleted resource whose cluster cannot be reached gives up its finalizer: `timeout` after the first
// attempt in this process that found ZooKeeper unreachable. A restarted operator counts afresh (never from
// the resource's deletionTimestamp), and an attempt that reaches the cluster clears the count.
class give_up_clock {
 public:
  using clock = std::chrono::steady_clock;

  explicit give_up_clock(clock::duration timeout) : timeout_(timeout) {}

  // An attempt for `key` found the cluster unreachable at `now`: whether it has been unreachable for
  // `timeout` since the first such attempt.
  bool unreachable(const std::string& key, clock::time_point now);
  // An attempt for `key` reached the cluster, or the resource is gone.
  void reached(const std::string& key);

 private:
  const clock::duration timeout_;
  std::mutex mutex_;
  std::map<std::string, clock::time_point> first_failure_;
};

}  // namespace ferry::kube
