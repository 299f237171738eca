#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "base/result.h"

namespace ferry::coord {

// Kafka's Uuid (topic ids, cluster id): 16 bytes, written as url-safe base64 without padding, 22 characters.
struct uuid {
  std::array<std::uint8_t, 16> bytes{};

  // A random version-4 id, never all zero and never starting with '-' (Kafka rejects those: they look like
  // command-line options).
  static uuid random();
  // errc::invalid_data unless `text` is exactly 22 url-safe base64 characters encoding 16 bytes.
  static result<uuid> parse(std::string_view text);

  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] bool is_zero() const { return *this == uuid{}; }

  auto operator<=>(const uuid&) const = default;

  friend std::ostream& operator<<(std::ostream& out, const uuid& u) { return out << u.to_string(); }
};

}  // namespace ferry::coord
