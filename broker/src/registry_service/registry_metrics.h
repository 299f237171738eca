#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <string>

#include "registry/registry_state.h"

namespace ferry::registry_service {

// The registry's Prometheus series: requests by kind (read, write, forwarded: a write this broker sent on to the
// leader) and HTTP status, schemas refused as incompatible, and the size of this broker's copy (subjects, schemas,
// the offset of `_schemas` it has read to).
class registry_metrics {
 public:
  explicit registry_metrics(prometheus::Registry& registry);

  void count(const std::string& kind, int status);
  // Sets the gauges from the copy (at scrape time).
  void refresh(const registry::registry_state& state);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Counter& incompatible_;
  prometheus::Gauge& subjects_;
  prometheus::Gauge& schemas_;
  prometheus::Gauge& read_offset_;
};

}  // namespace ferry::registry_service
