#include "kube/conditions.h"

#include <chrono>
#include <string>

#include "kube/time_format.h"

namespace ferry::kube {

nlohmann::json make_condition(const nlohmann::json& old_conditions, std::string_view type, bool status,
                              std::string_view reason, std::string_view message, std::int64_t observed_generation) {
  nlohmann::json condition = {{"type", type},
                              {"status", status ? "True" : "False"},
                              {"reason", reason},
                              {"message", message},
                              {"observedGeneration", observed_generation}};
  std::string since = format_time(std::chrono::system_clock::now());
  if (old_conditions.is_array()) {
    for (const auto& c : old_conditions) {
      if (c.is_object() && c.value("type", "") == type && c.value("status", "") == condition["status"]) {
        since = c.value("lastTransitionTime", since);
      }
    }
  }
  condition["lastTransitionTime"] = since;
  return condition;
}

void set_condition(nlohmann::json& status, const nlohmann::json& condition) {
  auto conditions = nlohmann::json::array();
  const auto old = status.find("conditions");
  if (old != status.end() && old->is_array()) {
    for (const auto& c : *old) {
      if (!c.is_object() || c.value("type", "") != condition["type"]) conditions.push_back(c);
    }
  }
  conditions.push_back(condition);
  status["conditions"] = std::move(conditions);
}

}  // namespace ferry::kube
