#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kube/metrics.h"
#include "kube/work_queue.h"

namespace ferry::kube {

// A resource's Ready condition as a reconcile left it, for ferry_operator_resources and the reconcile's result.
struct resource_state {
  bool ready = false;
  std::string reason;  // the Ready condition's reason
  bool gone = false;   // the resource no longer exists (or is no longer ours): forget it
};

// What a reconcile asks of its controller afterwards.
struct reconcile_result {
  bool failed = false;                         // retried with a per-key exponential backoff
  std::chrono::milliseconds requeue_after{0};  // when not failed: look again after this long (0: only on change)
  std::optional<resource_state> state;         // nullopt: no report (the last one stands)
};

// The `result` label of ferry_operator_reconciles_total: `error` (failed, retried with backoff); `refused` (Ready
// is False and nothing is planned until the resource or the cluster changes: the spec asks for what cannot be
// done); `requeue` (not done yet: Ready False and looked at again after a delay, or no state reported and a
// requeue asked); `success` otherwise.
std::string_view result_label(const reconcile_result& outcome);

// Workers that take keys from a work queue and reconcile them, one key never on two workers at once. Each
// reconcile's result and state go to the metrics, under the controller's name (which is the resources' kind).
class controller {
 public:
  using reconcile_fn = std::function<reconcile_result(const std::string& key)>;

  controller(std::string name, reconcile_fn reconcile, operator_metrics& metrics);
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
  void running(const std::string& key, bool started);

  const std::string name_;
  reconcile_fn reconcile_;
  operator_metrics& metrics_;
  work_queue queue_;
  std::vector<std::thread> workers_;
  std::mutex running_mutex_;
  std::map<std::string, std::chrono::system_clock::time_point> running_;  // key: when its reconcile started
};

}  // namespace ferry::kube
