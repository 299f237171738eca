#pragma once

#include <cstdint>

namespace ferry::bytes {

// Zigzag mapping used by Kafka's signed VARINT and VARLONG (as in protocol buffers).
[[nodiscard]] constexpr std::uint64_t zigzag_encode(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
[[nodiscard]] constexpr std::int64_t zigzag_decode(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// Bytes an unsigned varint of this value takes on the wire (1 to 10).
[[nodiscard]] constexpr int uvarint_size(std::uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

}  // namespace ferry::bytes
