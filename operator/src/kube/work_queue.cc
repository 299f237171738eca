#include "kube/work_queue.h"

#include <algorithm>

namespace ferry::kube {

void work_queue::observe(observer o) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(o);
  depth_changed_locked();
}

void work_queue::depth_changed_locked() {
  if (observer_.depth) observer_.depth(queue_.size());
}

void work_queue::add(const std::string& key) {
  std::lock_guard lock(mutex_);
  add_locked(key);
}

void work_queue::add_locked(const std::string& key) {
  if (shutting_down_ || !dirty_.insert(key).second) return;
  if (observer_.added) observer_.added();
  if (processing_.contains(key)) return;  // done() queues it again
  push_locked(key);
}

void work_queue::push_locked(const std::string& key) {
  forget_delay_locked(key);  // the run it is queued for asks for its own requeue
  queue_.push_back(key);
  depth_changed_locked();
  wake_.notify_one();
}

void work_queue::forget_delay_locked(const std::string& key) {
  const auto it = ready_at_.find(key);
  if (it == ready_at_.end()) return;
  delayed_.erase({it->second, key});
  ready_at_.erase(it);
}

void work_queue::add_after(const std::string& key, std::chrono::milliseconds delay) {
  if (delay <= std::chrono::milliseconds::zero()) return add(key);
  std::lock_guard lock(mutex_);
  // A dirty key runs (again) before the delay is up, and that run asks for its own requeue.
  if (shutting_down_ || dirty_.contains(key)) return;
  const auto at = clock::now() + delay;
  const auto [it, inserted] = ready_at_.try_emplace(key, at);
  if (!inserted) {
    if (it->second <= at) return;  // the earlier delay wins
    delayed_.erase({it->second, key});
    it->second = at;
  }
  delayed_.emplace(at, key);
  wake_.notify_one();
}

void work_queue::add_rate_limited(const std::string& key) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard lock(mutex_);
    const auto failures = failures_[key]++;
    if (observer_.retried) observer_.retried();
    delay = max_delay_;
    if (failures < 32) delay = std::min(max_delay_, base_delay_ * (std::int64_t{1} << failures));
  }
  add_after(key, delay);
}

void work_queue::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

void work_queue::promote_due_locked(clock::time_point now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    const auto key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    ready_at_.erase(key);
    add_locked(key);
  }
}

std::optional<std::string> work_queue::get() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (shutting_down_) return std::nullopt;
    promote_due_locked(clock::now());
    if (!queue_.empty()) break;
    if (delayed_.empty()) {
      wake_.wait(lock);
    } else {
      const auto next = delayed_.begin()->first;  // a copy: another thread may erase the entry meanwhile
      wake_.wait_until(lock, next);
    }
  }
  auto key = std::move(queue_.front());
  queue_.pop_front();
  depth_changed_locked();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

void work_queue::done(const std::string& key) {
  std::lock_guard lock(mutex_);
  processing_.erase(key);
  if (dirty_.contains(key) && !shutting_down_) push_locked(key);
}

void work_queue::shut_down() {
  std::lock_guard lock(mutex_);
  shutting_down_ = true;
  wake_.notify_all();
}

std::size_t work_queue::depth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::size_t work_queue::delayed() const {
  std::lock_guard lock(mutex_);
  return delayed_.size();
}

std::size_t work_queue::failures(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

}  // namespace ferry::kube
