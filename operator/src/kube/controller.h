#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kube/metrics.h"
#include "kube/work_queue.h"

namespace ferry::kube {

// What a reconcile asks of its controller afterwards.
struct reconcile_result {
  bool failed = false;                         // retried with a per-key exponential backoff
  std::chrono::milliseconds requeue_after{0};  // when not failed: look again after this long (0: only on change)
};

// Workers that take keys from a work queue and reconcile them, one key never on two workers at once.
class controller {
 public:
  using reconcile_fn = std::function<reconcile_result(const std::string& key)>;

  controller(std::string name, reconcile_fn reconcile, operator_metrics& metrics)
      : name_(std::move(name)), reconcile_(std::move(reconcile)), metrics_(metrics) {}
  ~controller() { stop(); }
  controller(const controller&) = delete;
  controller& operator=(const controller&) = delete;

  // Set before start() when the reconciler needs the queue to be built.
  void set_reconcile(reconcile_fn reconcile) { reconcile_ = std::move(reconcile); }
  [[nodiscard]] work_queue& queue() { return queue_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  void start(std::size_t workers);
  void stop();

 private:
  void work();

  const std::string name_;
  reconcile_fn reconcile_;
  operator_metrics& metrics_;
  work_queue queue_;
  std::vector<std::thread> workers_;
};

}  // namespace ferry::kube
