#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "certs/broker_certificate.h"
#include "certs/ca_keeper.h"
#include "kube/api_client.h"
#include "kube/controller.h"

namespace ferry::certs {

struct certificate_controller_options {
  std::shared_ptr<ca_keeper> cluster_ca;              // null: none kept
  std::shared_ptr<ca_keeper> clients_ca;              // null: none kept
  std::optional<broker_certificate_options> brokers;  // needs cluster_ca
  // How often the CAs and the brokers' certificate are looked at again.
  std::chrono::milliseconds interval{60'000};
};

// Keeps the CAs and the brokers' certificate current, on one key looked at again every interval.
class certificate_controller {
 public:
  static constexpr std::string_view key = "certificates";

  certificate_controller(kube::api_client& api, certificate_controller_options options)
      : api_(api), options_(std::move(options)) {}

  kube::reconcile_result reconcile(const std::string& key);

 private:
  kube::api_client& api_;
  const certificate_controller_options options_;
};

}  // namespace ferry::certs
