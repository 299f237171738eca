#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace ferry::kube {

// The keys (namespace/name) that need reconciling, shared by a controller's workers. A key is queued at most
// once however often it is added; a key being worked on is never handed to a second worker, and if it is added
// meanwhile it comes back once the first worker is done. Failed keys come back after a delay that doubles with
// each failure in a row. A key waits for at most one delay, the earliest asked for (as in client-go's delaying
// queue), and none while it is queued: the run it is queued for decides its next requeue. Thread-safe.
class work_queue {
 public:
  using clock = std::chrono::steady_clock;

  explicit work_queue(std::chrono::milliseconds base_delay = std::chrono::milliseconds(200),
                      std::chrono::milliseconds max_delay = std::chrono::seconds(60))
      : base_delay_(base_delay), max_delay_(max_delay) {}

  // What a controller's metrics follow, called under the queue's lock (keep them short, never call back): the
  // number of keys waiting, each time it changes; each key newly queued; each add_rate_limited. Set before use.
  struct observer {
    std::function<void(std::size_t depth)> depth;
    std::function<void()> added;
    std::function<void()> retried;
  };
  void observe(observer o);

  void add(const std::string& key);
  void add_after(const std::string& key, std::chrono::milliseconds delay);
  // After a failure: back after base_delay * 2^(failures in a row), at most max_delay.
  void add_rate_limited(const std::string& key);
  // After a success: the key's failure count starts again from zero.
  void forget(const std::string& key);
  // The next key to work on, waiting for one; nullopt once shut down.
  std::optional<std::string> get();
  // Must follow every get() that returned a key.
  void done(const std::string& key);
  void shut_down();

  // Keys waiting (not counting delayed ones or those being worked on).
  [[nodiscard]] std::size_t depth() const;
  // Keys waiting for their delay.
  [[nodiscard]] std::size_t delayed() const;
  [[nodiscard]] std::size_t failures(const std::string& key) const;

 private:
  void add_locked(const std::string& key);
  void push_locked(const std::string& key);
  void forget_delay_locked(const std::string& key);
  void promote_due_locked(clock::time_point now);
  void depth_changed_locked();

  const std::chrono::milliseconds base_delay_;
  const std::chrono::milliseconds max_delay_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;       // queued, or to be queued again when its worker is done
  std::set<std::string> processing_;  // handed to a worker
  std::set<std::pair<clock::time_point, std::string>> delayed_;  // by time: get() waits for the first
  std::map<std::string, clock::time_point> ready_at_;            // the key's entry in delayed_
  std::map<std::string, std::size_t> failures_;
  bool shutting_down_ = false;
  observer observer_;
};

}  // namespace ferry::kube
