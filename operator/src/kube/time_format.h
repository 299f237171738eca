#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::kube {

using system_time = std::chrono::system_clock::time_point;

// metav1.Time ("2026-12-03T19:50:00Z") and metav1.MicroTime ("2026-12-03T19:50:00.123456Z"), always UTC.
std::string format_time(system_time t);
std::string format_micro_time(system_time t);
// Either form; nullopt when malformed.
std::optional<system_time> parse_time(std::string_view text);

}  // namespace ferry::kube
