#include "certs/certificate_controller.h"

#include "base/log.h"

namespace ferry::certs {

kube::reconcile_result certificate_controller::reconcile(const std::string& /*key*/) {
  const auto now = std::chrono::system_clock::now();
  bool failed = false;
  for (const auto& keeper : {options_.cluster_ca, options_.clients_ca}) {
    if (!keeper) continue;
    if (auto why = keeper->refresh(now)) {
      FERRY_LOG(error, "certs") << *why;
      failed = true;
    }
  }
  const auto cluster = options_.cluster_ca ? options_.cluster_ca->current() : nullptr;
  const auto clients = options_.clients_ca ? options_.clients_ca->current() : nullptr;
  if (options_.brokers && cluster) {
    if (auto why = keep_broker_certificate(api_, *options_.brokers, *cluster, clients.get(), now)) {
      FERRY_LOG(error, "certs") << *why;
      failed = true;
    }
  }
  return {.failed = failed, .requeue_after = failed ? std::chrono::milliseconds(0) : options_.interval};
}

}  // namespace ferry::certs
