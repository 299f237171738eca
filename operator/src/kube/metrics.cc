#include "kube/metrics.h"

namespace ferry::kube {

operator_metrics::operator_metrics()
    : reconciles_(prometheus::BuildCounter()
                      .Name("ferry_operator_reconciles_total")
                      .Help("Reconciles by controller and result (success or error)")
                      .Register(*registry_)),
      durations_(prometheus::BuildHistogram()
                     .Name("ferry_operator_reconcile_duration_seconds")
                     .Help("How long one reconcile took")
                     .Register(*registry_)),
      queue_depth_(prometheus::BuildGauge()
                       .Name("ferry_operator_queue_depth")
                       .Help("Keys waiting in a controller's work queue")
                       .Register(*registry_)),
      watch_restarts_(prometheus::BuildCounter()
                          .Name("ferry_operator_watch_restarts_total")
                          .Help("Watches that ended by an error or 410 Gone and were started again")
                          .Register(*registry_)),
      leader_(prometheus::BuildGauge()
                  .Name("ferry_operator_leader")
                  .Help("1 while this replica holds the leader lease")
                  .Register(*registry_)
                  .Add({})),
      api_requests_(prometheus::BuildCounter()
                        .Name("ferry_operator_api_requests_total")
                        .Help("Requests to the Kubernetes API server by verb and HTTP status (0: no answer)")
                        .Register(*registry_)) {}

void operator_metrics::reconciled(const std::string& controller, bool ok, double seconds) {
  reconciles_.Add({{"controller", controller}, {"result", ok ? "success" : "error"}}).Increment();
  durations_
      .Add({{"controller", controller}},
           prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30})
      .Observe(seconds);
}

void operator_metrics::set_queue_depth(const std::string& controller, std::size_t depth) {
  queue_depth_.Add({{"controller", controller}}).Set(static_cast<double>(depth));
}

void operator_metrics::watch_restarted(const std::string& resource) {
  watch_restarts_.Add({{"resource", resource}}).Increment();
}

void operator_metrics::set_leader(bool leading) { leader_.Set(leading ? 1 : 0); }

void operator_metrics::api_request(std::string_view verb, unsigned status) {
  api_requests_.Add({{"verb", std::string(verb)}, {"code", std::to_string(status)}}).Increment();
}

}  // namespace ferry::kube
