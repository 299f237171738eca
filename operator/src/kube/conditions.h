#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ferry::kube {

// A status condition (metav1.Condition) of `type`, keeping lastTransitionTime from the same type in
// `old_conditions` when its status has not changed.
nlohmann::json make_condition(const nlohmann::json& old_conditions, std::string_view type, bool status,
                              std::string_view reason, std::string_view message, std::int64_t observed_generation);

// Puts `condition` into status.conditions in place of the one of its type.
void set_condition(nlohmann::json& status, const nlohmann::json& condition);

}  // namespace ferry::kube
