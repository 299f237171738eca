#include "kube/controller.h"

#include <exception>

#include "base/log.h"

namespace ferry::kube {

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

void controller::work() {
  while (auto key = queue_.get()) {
    const auto started = std::chrono::steady_clock::now();
    reconcile_result outcome;
    try {
      outcome = reconcile_(*key);
    } catch (const std::exception& e) {
      // A bug must not end the worker: the key is retried like any failure.
      FERRY_LOG(error, name_) << "reconcile of " << *key << " threw: " << e.what();
      outcome.failed = true;
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    metrics_.reconciled(name_, !outcome.failed, took.count());
    if (outcome.failed) {
      queue_.add_rate_limited(*key);
    } else {
      queue_.forget(*key);
      if (outcome.requeue_after.count() > 0) queue_.add_after(*key, outcome.requeue_after);
    }
    queue_.done(*key);
    metrics_.set_queue_depth(name_, queue_.depth());
  }
}

}  // namespace ferry::kube
