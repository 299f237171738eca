#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace ferry::kube {

// Events (events.k8s.io/v1) about an object, for what its users should see in `kubectl describe`. Posting is
// asynchronous and best effort: a failure is logged, never retried.
class event_recorder {
 public:
  event_recorder(api_client& client, std::string controller, std::string instance)
      : client_(client), controller_(std::move(controller)), instance_(std::move(instance)) {}

  enum class type { normal, warning };
  // `regarding` is the object as read (kind, apiVersion and metadata are used); `reason` is CamelCase;
  // `action` what the operator did or tried ("Create", "Delete", ...).
  void record(const nlohmann::json& regarding, type t, std::string_view reason, std::string_view action,
              std::string_view note);

 private:
  api_client& client_;
  const std::string controller_;
  const std::string instance_;
};

}  // namespace ferry::kube
