#include "kube/metrics.h"

namespace ferry::kube {
namespace {

const prometheus::Histogram::BucketBoundaries& reconcile_buckets() {
  static const prometheus::Histogram::BucketBoundaries buckets{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30};
  return buckets;
}

}  // namespace

operator_metrics::operator_metrics()
    : reconciles_(prometheus::BuildCounter()
                      .Name("ferry_operator_reconciles_total")
                      .Help("Reconciles by controller and result (success, refused, requeue or error)")
                      .Register(*registry_)),
      durations_(prometheus::BuildHistogram()
                     .Name("ferry_operator_reconcile_duration_seconds")
                     .Help("How long one reconcile took")
                     .Register(*registry_)),
      queue_depth_(prometheus::BuildGauge()
                       .Name("ferry_operator_queue_depth")
                       .Help("Keys waiting in a controller's work queue (not those delayed or being reconciled)")
                       .Register(*registry_)),
      queue_adds_(prometheus::BuildCounter()
                      .Name("ferry_operator_queue_adds_total")
                      .Help("Keys queued that were not queued already")
                      .Register(*registry_)),
      queue_retries_(prometheus::BuildCounter()
                         .Name("ferry_operator_queue_retries_total")
                         .Help("Keys queued again with a backoff after a failed reconcile")
                         .Register(*registry_)),
      oldest_running_(prometheus::BuildGauge()
                          .Name("ferry_operator_oldest_reconcile_start_time_seconds")
                          .Help("Unix time at which the longest-running reconcile in progress started (0: none)")
                          .Register(*registry_)),
      watch_restarts_(prometheus::BuildCounter()
                          .Name("ferry_operator_watch_restarts_total")
                          .Help("Watches that ended by an error or 410 Gone and were started again")
                          .Register(*registry_)),
      leader_(prometheus::BuildGauge()
                  .Name("ferry_operator_leader")
                  .Help("1 while this replica acts (holds the leader lease, or runs without leader election)")
                  .Register(*registry_)
                  .Add({})),
      api_requests_(prometheus::BuildCounter()
                        .Name("ferry_operator_api_requests_total")
                        .Help("Requests to the Kubernetes API server by verb and HTTP status (0: no answer)")
                        .Register(*registry_)),
      api_throttle_(prometheus::BuildHistogram()
                        .Name("ferry_operator_api_rate_limiter_wait_seconds")
                        .Help("How long each write to the API server waited for the client-side rate limiter")
                        .Register(*registry_)
                        .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60})),
      events_(prometheus::BuildCounter()
                  .Name("ferry_operator_events_total")
                  .Help("Events recorded: posted, or folded into an equal or similar one posted earlier")
                  .Register(*registry_)),
      resources_(prometheus::BuildGauge()
                     .Name("ferry_operator_resources")
                     .Help("Resources by kind and Ready state with its reason, as last reconciled")
                     .Register(*registry_)),
      reassignments_in_flight_(prometheus::BuildGauge()
                                   .Name("ferry_operator_reassignments_in_flight")
                                   .Help("Replica moves the balancer started that have not finished")
                                   .Register(*registry_)
                                   .Add({})),
      leaving_brokers_(prometheus::BuildGauge()
                           .Name("ferry_operator_leaving_brokers")
                           .Help("Brokers being drained before the StatefulSet is scaled down")
                           .Register(*registry_)
                           .Add({})),
      replica_floor_(prometheus::BuildGauge()
                         .Name("ferry_operator_replica_floor")
                         .Help("Replicas the brokers' StatefulSet must not go below (its ferry.dev/replica-floor)")
                         .Register(*registry_)
                         .Add({})) {
  for (const auto* result : {"posted", "folded"}) events_.Add({{"result", result}});
}

void operator_metrics::init_controller(const std::string& controller) {
  for (const auto* result : {"success", "refused", "requeue", "error"}) {
    reconciles_.Add({{"controller", controller}, {"result", result}});
  }
  durations_.Add({{"controller", controller}}, reconcile_buckets());
  queue_depth_.Add({{"controller", controller}});
  queue_adds_.Add({{"controller", controller}});
  queue_retries_.Add({{"controller", controller}});
  oldest_running_.Add({{"controller", controller}});
}

void operator_metrics::reconciled(const std::string& controller, std::string_view result, double seconds) {
  reconciles_.Add({{"controller", controller}, {"result", std::string(result)}}).Increment();
  durations_.Add({{"controller", controller}}, reconcile_buckets()).Observe(seconds);
}

void operator_metrics::set_queue_depth(const std::string& controller, std::size_t depth) {
  queue_depth_.Add({{"controller", controller}}).Set(static_cast<double>(depth));
}

void operator_metrics::queue_added(const std::string& controller) {
  queue_adds_.Add({{"controller", controller}}).Increment();
}

void operator_metrics::queue_retried(const std::string& controller) {
  queue_retries_.Add({{"controller", controller}}).Increment();
}

void operator_metrics::set_oldest_running(const std::string& controller,
                                          std::chrono::system_clock::time_point started) {
  const std::chrono::duration<double> since_epoch = started.time_since_epoch();
  oldest_running_.Add({{"controller", controller}}).Set(since_epoch.count());
}

void operator_metrics::clear_oldest_running(const std::string& controller) {
  oldest_running_.Add({{"controller", controller}}).Set(0);
}

void operator_metrics::watch_restarted(const std::string& resource) {
  watch_restarts_.Add({{"resource", resource}}).Increment();
}

void operator_metrics::set_leader(bool leading) { leader_.Set(leading ? 1 : 0); }

void operator_metrics::api_request(std::string_view verb, unsigned status) {
  api_requests_.Add({{"verb", std::string(verb)}, {"code", std::to_string(status)}}).Increment();
}

void operator_metrics::api_throttled(std::chrono::nanoseconds waited) {
  api_throttle_.Observe(std::chrono::duration<double>(waited).count());
}

void operator_metrics::event_recorded(bool posted) {
  events_.Add({{"result", posted ? "posted" : "folded"}}).Increment();
}

void operator_metrics::count_resource_locked(const std::string& kind, bool ready, const std::string& reason,
                                             int delta) {
  auto& count = counts_[{kind, ready, reason}];
  count = delta < 0 ? count - 1 : count + 1;
  resources_.Add({{"kind", kind}, {"ready", ready ? "true" : "false"}, {"reason", reason}})
      .Set(static_cast<double>(count));
}

void operator_metrics::set_resource_state(std::string_view kind, const std::string& key, bool ready,
                                          std::string_view reason) {
  std::lock_guard lock(resources_mutex_);
  auto of_kind = states_.find(kind);
  if (of_kind == states_.end()) of_kind = states_.emplace(std::string(kind), decltype(states_)::mapped_type{}).first;
  auto [it, added] = of_kind->second.try_emplace(key);
  auto& state = it->second;
  if (!added) {
    if (state.ready == ready && state.reason == reason) return;
    count_resource_locked(of_kind->first, state.ready, state.reason, -1);
  }
  state = {ready, std::string(reason)};
  count_resource_locked(of_kind->first, ready, state.reason, +1);
}

void operator_metrics::forget_resource(std::string_view kind, const std::string& key) {
  std::lock_guard lock(resources_mutex_);
  const auto of_kind = states_.find(kind);
  if (of_kind == states_.end()) return;
  const auto it = of_kind->second.find(key);
  if (it == of_kind->second.end()) return;
  count_resource_locked(of_kind->first, it->second.ready, it->second.reason, -1);
  of_kind->second.erase(it);
}

void operator_metrics::set_reassignments_in_flight(std::size_t moves) {
  reassignments_in_flight_.Set(static_cast<double>(moves));
}

void operator_metrics::set_leaving_brokers(std::size_t brokers) { leaving_brokers_.Set(static_cast<double>(brokers)); }

void operator_metrics::set_replica_floor(std::size_t brokers) { replica_floor_.Set(static_cast<double>(brokers)); }

}  // namespace ferry::kube
