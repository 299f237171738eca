#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ferry::bytes {

// Kafka's variable-length integers, the one codec for the protocol (unsigned varints of compact lengths and
// tagged fields) and for records (zigzag-signed VARINT and VARLONG): 7 bits a byte, least significant
// first, the high bit set on every byte but the last.

inline constexpr std::size_t max_varint_bytes = 10;  // a 64-bit value

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

// Decodes the unsigned varint at the front of `in` into `value`. Returns the bytes it took, or 0 when `in`
// ends inside it or it runs past max_varint_bytes.
[[nodiscard]] inline std::size_t decode_uvarint(std::span<const std::byte> in, std::uint64_t& value) {
  // Most varints on the hot path (record lengths, deltas, header counts) are one or two bytes: a 100-byte
  // value's length, the record's length and offset deltas past 63 take two.
  if (!in.empty() && (static_cast<std::uint8_t>(in[0]) & 0x80) == 0) {
    value = static_cast<std::uint8_t>(in[0]);
    return 1;
  }
  if (in.size() >= 2 && (static_cast<std::uint8_t>(in[1]) & 0x80) == 0) {
    value = (static_cast<std::uint64_t>(in[0]) & 0x7F) | (static_cast<std::uint64_t>(in[1]) << 7);
    return 2;
  }
  std::uint64_t result = 0;
  const std::size_t limit = in.size() < max_varint_bytes ? in.size() : max_varint_bytes;
  for (std::size_t i = 0; i < limit; ++i) {
    const auto b = static_cast<std::uint8_t>(in[i]);
    result |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) {
      value = result;
      return i + 1;
    }
  }
  return 0;
}

// Decodes a zigzag-signed varint (VARINT or VARLONG); 0 as decode_uvarint.
[[nodiscard]] inline std::size_t decode_varint(std::span<const std::byte> in, std::int64_t& value) {
  std::uint64_t raw = 0;
  const std::size_t n = decode_uvarint(in, raw);
  value = zigzag_decode(raw);
  return n;
}

// Writes `v` at `out`, which must have room for uvarint_size(v) bytes; returns that size.
inline std::size_t encode_uvarint(std::uint64_t v, std::byte* out) {
  std::size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<std::byte>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<std::byte>(v);
  return n;
}

inline std::size_t encode_varint(std::int64_t v, std::byte* out) { return encode_uvarint(zigzag_encode(v), out); }

}  // namespace ferry::bytes
