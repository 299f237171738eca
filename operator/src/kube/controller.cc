#include "kube/controller.h"

#include <algorithm>
#include <exception>

#include "base/log.h"

namespace ferry::kube {

std::string_view result_label(const reconcile_result& outcome) {
  if (outcome.failed) return "error";
  if (outcome.state && !outcome.state->gone && !outcome.state->ready) {
    return outcome.requeue_after.count() > 0 ? "requeue" : "refused";
  }
  if (!outcome.state && outcome.requeue_after.count() > 0) return "requeue";
  return "success";
}

controller::controller(std::string name, reconcile_fn reconcile, operator_metrics& metrics)
    : name_(std::move(name)), reconcile_(std::move(reconcile)), metrics_(metrics) {
  metrics_.init_controller(name_);
  queue_.observe({.depth = [this](std::size_t depth) { metrics_.set_queue_depth(name_, depth); },
                  .added = [this] { metrics_.queue_added(name_); },
                  .retried = [this] { metrics_.queue_retried(name_); }});
}

void controller::start(std::size_t workers) {
  for (std::size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

void controller::stop() {
  queue_.shut_down();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
}

void controller::running(const std::string& key, bool started) {
  std::lock_guard lock(running_mutex_);
  if (started) {
    running_[key] = std::chrono::system_clock::now();
  } else {
    running_.erase(key);
  }
  if (running_.empty()) {
    metrics_.clear_oldest_running(name_);
    return;
  }
  const auto oldest = std::min_element(running_.begin(), running_.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
  metrics_.set_oldest_running(name_, oldest->second);
}

void controller::work() {
  while (auto key = queue_.get()) {
    const auto started = std::chrono::steady_clock::now();
    running(*key, true);
    reconcile_result outcome;
    try {
      outcome = reconcile_(*key);
    } catch (const std::exception& e) {
      // A bug must not end the worker: the key is retried like any failure.
      FERRY_LOG(error, name_) << "reconcile of " << *key << " threw: " << e.what();
      outcome = {.failed = true};
    }
    running(*key, false);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    metrics_.reconciled(name_, result_label(outcome), took.count());
    if (outcome.state) {
      if (outcome.state->gone) {
        metrics_.forget_resource(name_, *key);
      } else {
        metrics_.set_resource_state(name_, *key, outcome.state->ready, outcome.state->reason);
      }
    }
    if (outcome.failed) {
      queue_.add_rate_limited(*key);
    } else {
      queue_.forget(*key);
      if (outcome.requeue_after.count() > 0) queue_.add_after(*key, outcome.requeue_after);
    }
    queue_.done(*key);
  }
}

}  // namespace ferry::kube
