#include "registry/compatibility.h"

#include <array>
#include <utility>

namespace ferry::registry {
namespace {

constexpr std::array<std::pair<compatibility_level, std::string_view>, 7> names{{
    {compatibility_level::none, "NONE"},
    {compatibility_level::backward, "BACKWARD"},
    {compatibility_level::backward_transitive, "BACKWARD_TRANSITIVE"},
    {compatibility_level::forward, "FORWARD"},
    {compatibility_level::forward_transitive, "FORWARD_TRANSITIVE"},
    {compatibility_level::full, "FULL"},
    {compatibility_level::full_transitive, "FULL_TRANSITIVE"},
}};

bool transitive(compatibility_level level) {
  return level == compatibility_level::backward_transitive || level == compatibility_level::forward_transitive ||
         level == compatibility_level::full_transitive;
}
bool checks_backward(compatibility_level level) {
  return level != compatibility_level::none && level != compatibility_level::forward &&
         level != compatibility_level::forward_transitive;
}
bool checks_forward(compatibility_level level) {
  return level != compatibility_level::none && level != compatibility_level::backward &&
         level != compatibility_level::backward_transitive;
}

}  // namespace

std::optional<compatibility_level> parse_level(std::string_view name) {
  for (const auto& [level, text] : names)
    if (text == name) return level;
  return std::nullopt;
}

std::string_view level_name(compatibility_level level) {
  for (const auto& [l, text] : names)
    if (l == level) return text;
  return "NONE";
}

std::vector<std::string> incompatibilities(compatibility_level level, const schema::parsed_schema& candidate,
                                           const std::vector<std::pair<std::int32_t, schema::schema_ptr>>& existing) {
  std::vector<std::string> found;
  if (level == compatibility_level::none || existing.empty()) return found;
  const auto first = transitive(level) ? existing.begin() : std::prev(existing.end());
  // Newest first, as Confluent reports them.
  for (auto it = existing.end(); it != first;) {
    --it;
    const std::int32_t version = it->first;
    const auto& previous = *it->second;
    std::vector<std::pair<std::string_view, std::vector<std::string>>> checks;
    if (checks_backward(level)) checks.emplace_back("backward", candidate.backward_incompatibilities(previous));
    if (checks_forward(level)) checks.emplace_back("forward", previous.backward_incompatibilities(candidate));
    for (const auto& [direction, messages] : checks)
      for (const auto& m : messages) {
        std::string line(direction);
        line.append(" incompatible with version ").append(std::to_string(version)).append(": ").append(m);
        found.push_back(std::move(line));
      }
  }
  return found;
}

}  // namespace ferry::registry
