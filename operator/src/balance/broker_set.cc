#include "balance/broker_set.h"

#include <charconv>

namespace ferry::balance {
namespace {

std::optional<std::int32_t> count_of(const std::string& text) {
  std::int32_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || at != end || value < 0) return std::nullopt;
  return value;
}

std::optional<std::string> annotation(const nlohmann::json& object, std::string_view name) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return std::nullopt;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return std::nullopt;
  const auto value = annotations->find(name);
  if (value == annotations->end() || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

}  // namespace

broker_set_reading read_broker_set(const nlohmann::json& statefulset) {
  broker_set set;
  const auto spec = statefulset.find("spec");
  if (spec == statefulset.end() || !spec->is_object()) return {std::nullopt, "the StatefulSet has no spec"};
  // spec.replicas defaults to 1 and is always set in what the API server returns.
  const auto replicas = spec->find("replicas");
  if (replicas != spec->end() && !replicas->is_number_integer()) return {std::nullopt, "spec.replicas is not a number"};
  set.replicas = replicas == spec->end() ? 1 : replicas->get<std::int32_t>();
  set.desired = set.replicas;
  if (const auto asked = annotation(statefulset, brokers_annotation)) {
    const auto count = count_of(*asked);
    if (!count || *count == 0) {
      return {std::nullopt, "annotation " + std::string(brokers_annotation) + " is \"" + *asked +
                                "\"; it must be a number of brokers, 1 or more"};
    }
    set.desired = *count;
  }
  if (const auto floor = annotation(statefulset, replica_floor_annotation)) set.floor = count_of(*floor);
  return {set, {}};
}

}  // namespace ferry::balance
