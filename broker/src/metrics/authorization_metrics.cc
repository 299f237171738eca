#include "metrics/authorization_metrics.h"

namespace ferry::metrics {

authorization_metrics::authorization_metrics(prometheus::Registry& registry)
    : denials_(prometheus::BuildCounter()
                   .Name("ferry_authorization_denials_total")
                   .Help("Requests, or parts of requests, that the ACLs refused")
                   .Register(registry)),
      acls_(prometheus::BuildGauge()
                .Name("ferry_acls")
                .Help("ACLs in force on this broker (as it last read them from ZooKeeper)")
                .Register(registry)
                .Add({})) {}

}  // namespace ferry::metrics
