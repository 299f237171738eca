#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ferry::balance {

// The names the brokers' StatefulSet, the operator and the scale-down guard agree on (docs/operator.md,
// "Adding and removing brokers"). Broker i runs in pod i.
inline constexpr std::string_view brokers_annotation = "ferry.dev/brokers";              // the count asked for
inline constexpr std::string_view replica_floor_annotation = "ferry.dev/replica-floor";  // written by the operator

// What the brokers' StatefulSet asks for.
struct broker_set {
  std::int32_t replicas = 0;          // spec.replicas: pods that exist now
  std::int32_t desired = 0;           // ferry.dev/brokers, else spec.replicas
  std::optional<std::int32_t> floor;  // ferry.dev/replica-floor as last written
};

struct broker_set_reading {
  std::optional<broker_set> set;
  std::string error;  // why the object cannot be used, for an Event
};

broker_set_reading read_broker_set(const nlohmann::json& statefulset);

}  // namespace ferry::balance
