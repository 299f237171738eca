#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

namespace ferry::kube {

// The operator's own metrics (docs/metrics.md, "Operator"): reconciles by controller and result, their duration,
// the work queues, the resources' Ready state, watch restarts, API requests and the write limiter's waits, Events,
// leadership and the balancer's progress. Thread-safe.
class operator_metrics {
 public:
  operator_metrics();

  [[nodiscard]] prometheus::Registry& registry() { return *registry_; }
  [[nodiscard]] std::shared_ptr<prometheus::Registry> shared_registry() { return registry_; }

  // Creates a controller's series at 0, so that rates and sums have data before the first reconcile or retry.
  void init_controller(const std::string& controller);
  // `result`: success, refused, requeue or error (controller.h, reconcile_result).
  void reconciled(const std::string& controller, std::string_view result, double seconds);
  void set_queue_depth(const std::string& controller, std::size_t depth);
  void queue_added(const std::string& controller);
  void queue_retried(const std::string& controller);
  // The unix time at which the oldest reconcile still running started; nullopt-like 0 when none runs.
  void set_oldest_running(const std::string& controller, std::chrono::system_clock::time_point started);
  void clear_oldest_running(const std::string& controller);
  void watch_restarted(const std::string& resource);
  void set_leader(bool leading);
  void api_request(std::string_view verb, unsigned status);
  void api_throttled(std::chrono::nanoseconds waited);
  void event_recorded(bool posted);

  // ferry_operator_resources{kind,ready,reason}: each resource's last reported Ready state, counted. `kind` is the
  // resource's plural ("topics", "consumergroups"), `key` its namespace/name. Reporting a key again replaces its
  // state; forget_resource drops it (the resource is gone).
  void set_resource_state(std::string_view kind, const std::string& key, bool ready, std::string_view reason);
  void forget_resource(std::string_view kind, const std::string& key);

  // The balancer's progress: replica moves it started that are not finished, brokers being drained, and the
  // replica floor (brokers that hold replicas and so cannot be removed).
  void set_reassignments_in_flight(std::size_t moves);
  void set_leaving_brokers(std::size_t brokers);
  void set_replica_floor(std::size_t brokers);

 private:
  void count_resource_locked(const std::string& kind, bool ready, const std::string& reason, int delta);

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& reconciles_;
  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Family<prometheus::Gauge>& queue_depth_;
  prometheus::Family<prometheus::Counter>& queue_adds_;
  prometheus::Family<prometheus::Counter>& queue_retries_;
  prometheus::Family<prometheus::Gauge>& oldest_running_;
  prometheus::Family<prometheus::Counter>& watch_restarts_;
  prometheus::Gauge& leader_;
  prometheus::Family<prometheus::Counter>& api_requests_;
  prometheus::Histogram& api_throttle_;
  prometheus::Family<prometheus::Counter>& events_;
  prometheus::Family<prometheus::Gauge>& resources_;
  prometheus::Gauge& reassignments_in_flight_;
  prometheus::Gauge& leaving_brokers_;
  prometheus::Gauge& replica_floor_;

  struct resource_state {
    bool ready = false;
    std::string reason;
  };
  std::mutex resources_mutex_;
  std::map<std::string, std::map<std::string, resource_state, std::less<>>, std::less<>> states_;  // kind, key
  std::map<std::tuple<std::string, bool, std::string>, std::size_t> counts_;  // kind, ready, reason
};

}  // namespace ferry::kube
