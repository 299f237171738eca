#include "quota/quota_metrics.h"

#include <string>
#include <utility>

namespace ferry::quota {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily counter_family(std::string name, std::string help) {
  return MetricFamily{std::move(name), std::move(help), MetricType::Counter, {}};
}

std::string kind_label(quota_kind kind) {
  switch (kind) {
    case quota_kind::produce:
      return "produce";
    case quota_kind::fetch:
      return "fetch";
    case quota_kind::request:
      return "request";
    case quota_kind::controller_mutation:
      return "controller_mutation";
  }
  return "unknown";
}

void add_counter(MetricFamily& family, const sensor_totals& s, double value) {
  ClientMetric& m = family.metric.emplace_back();
  m.label = {{"kind", kind_label(s.kind)}, {"user", s.user}, {"client_id", s.client_id}};
  m.counter.value = value;
}

}  // namespace

std::vector<MetricFamily> quota_metrics::Collect() const {
  auto bytes = counter_family("ferry_client_quota_bytes_total",
                              "Bytes counted against a client quota budget (produced, or fetched and sent)");
  auto request_time = counter_family("ferry_client_quota_request_time_seconds_total",
                                     "Request thread time counted against a request_percentage budget");
  auto mutations = counter_family("ferry_client_quota_partition_mutations_total",
                                  "Partitions created or deleted against a controller_mutation_rate budget");
  auto throttle = counter_family("ferry_client_quota_throttle_time_seconds_total",
                                 "Throttle time given to the clients of a client quota budget");
  auto throttled = counter_family("ferry_client_quota_throttled_requests_total",
                                  "Responses to the clients of a client quota budget that carried a throttle time");
  for (const auto& s : quotas_.totals()) {
    const double used = s.recorded - s.unrecorded;
    switch (s.kind) {
      case quota_kind::produce:
      case quota_kind::fetch:
        add_counter(bytes, s, used);
        break;
      case quota_kind::request:
        add_counter(request_time, s, used / 1000.0);
        break;
      case quota_kind::controller_mutation:
        add_counter(mutations, s, used);
        break;
    }
    add_counter(throttle, s, static_cast<double>(s.throttle_ms) / 1000.0);
    add_counter(throttled, s, static_cast<double>(s.throttled));
  }
  return {std::move(bytes), std::move(request_time), std::move(mutations), std::move(throttle), std::move(throttled)};
}

}  // namespace ferry::quota
