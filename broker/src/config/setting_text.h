#pragma once

// The readers of settings' text that the config files share: every refusal names the setting and its value.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>
#include <string>
#include <vector>

#include "config/listeners.h"

namespace ferry::config::setting_text {

[[noreturn]] inline void fail(const std::string& key, const std::string& value, const std::string& why) {
  throw config_exception("invalid value '" + value + "' for '" + key + "': " + why);
}

template <typename Int>
Int to_int(const std::string& key, const std::string& value, Int min, Int max) {
  Int out{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc{} || end != value.data() + value.size()) fail(key, value, "not an integer");
  if (out < min || out > max)
    fail(key, value, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  return out;
}

inline bool to_bool(const std::string& key, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  fail(key, value, "must be true or false");
}

inline std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A comma-separated list, items trimmed, empty ones dropped.
inline std::vector<std::string> items(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ',');)
    if (auto t = trim(item); !t.empty()) out.push_back(std::move(t));
  return out;
}

}  // namespace ferry::config::setting_text
