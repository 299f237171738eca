#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/schema_format.h"

namespace ferry::registry {

// Confluent's compatibility levels. BACKWARD: the new schema reads data written with the latest version;
// FORWARD: the latest reads data written with the new one; FULL: both. The _TRANSITIVE levels check against
// every earlier version (not soft-deleted) rather than the latest alone.
enum class compatibility_level {
  none,
  backward,
  backward_transitive,
  forward,
  forward_transitive,
  full,
  full_transitive
};

inline constexpr std::string_view default_compatibility = "BACKWARD";

std::optional<compatibility_level> parse_level(std::string_view name);
std::string_view level_name(compatibility_level level);

// Why `candidate` cannot be registered after `existing` (oldest first, not soft-deleted) at `level`; empty
// when it can. Each message says which version it is about.
std::vector<std::string> incompatibilities(compatibility_level level, const schema::parsed_schema& candidate,
                                           const std::vector<std::pair<std::int32_t, schema::schema_ptr>>& existing);

}  // namespace ferry::registry
