#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <string>

namespace ferry::metrics {

// The authorizer's metrics: requests it refused, by what was asked (never by principal, whose number has no
// bound: the log line names it), and the ACLs in force. Thread-safe.
class authorization_metrics {
 public:
  explicit authorization_metrics(prometheus::Registry& registry);

  // Operation and resource type as Kafka's tools name them: "Write", "Topic".
  prometheus::Counter& denials(const std::string& operation, const std::string& resource_type) {
    return denials_.Add({{"operation", operation}, {"resource_type", resource_type}});
  }
  prometheus::Gauge& acls() { return acls_; }

 private:
  prometheus::Family<prometheus::Counter>& denials_;
  prometheus::Gauge& acls_;
};

}  // namespace ferry::metrics
