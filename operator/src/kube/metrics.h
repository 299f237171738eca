#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <string_view>

namespace ferry::kube {

// The operator's own metrics (docs/metrics.md): reconciles by controller and result, their duration, queue
// depth, and watch restarts by resource.
class operator_metrics {
 public:
  operator_metrics();

  [[nodiscard]] prometheus::Registry& registry() { return *registry_; }
  [[nodiscard]] std::shared_ptr<prometheus::Registry> shared_registry() { return registry_; }

  void reconciled(const std::string& controller, bool ok, double seconds);
  void set_queue_depth(const std::string& controller, std::size_t depth);
  void watch_restarted(const std::string& resource);
  void set_leader(bool leading);
  void api_request(std::string_view verb, unsigned status);

 private:
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& reconciles_;
  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Family<prometheus::Gauge>& queue_depth_;
  prometheus::Family<prometheus::Counter>& watch_restarts_;
  prometheus::Gauge& leader_;
  prometheus::Family<prometheus::Counter>& api_requests_;
};

}  // namespace ferry::kube
