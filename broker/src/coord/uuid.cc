#include "coord/uuid.h"

#include <random>

#include "coord/errc.h"

namespace ferry::coord {
namespace {

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

uuid uuid::random() {
  thread_local std::random_device device;
  for (;;) {
    uuid id;
    for (std::size_t i = 0; i < id.bytes.size(); i += 4) {
      const std::uint32_t word = device();
      for (std::size_t j = 0; j < 4; ++j) id.bytes[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
    }
    // Version 4, IETF variant, as java.util.UUID.randomUUID() which Kafka uses.
    id.bytes[6] = static_cast<std::uint8_t>((id.bytes[6] & 0x0f) | 0x40);
    id.bytes[8] = static_cast<std::uint8_t>((id.bytes[8] & 0x3f) | 0x80);
    if (id.to_string().front() != '-') return id;
  }
}

std::string uuid::to_string() const {
  std::string out;
  out.reserve(22);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out += alphabet[(group >> shift) & 0x3f];
  }
  // 16 = 5 * 3 + 1: one byte left, written as two characters without padding.
  const std::uint32_t last = bytes[i] << 16;
  out += alphabet[(last >> 18) & 0x3f];
  out += alphabet[(last >> 12) & 0x3f];
  return out;
}

result<uuid> uuid::parse(std::string_view text) {
  if (text.size() != 22) return errc::invalid_data;
  std::uint32_t bits = 0;
  int pending = 0;
  uuid id;
  std::size_t out = 0;
  for (const char c : text) {
    const int value = decode_char(c);
    if (value < 0) return errc::invalid_data;
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    pending += 6;
    if (pending >= 8) {
      pending -= 8;
      id.bytes[out++] = static_cast<std::uint8_t>(bits >> pending);
      bits &= (1u << pending) - 1;
    }
  }
  // 22 characters carry 132 bits; the 4 left over must be zero or the text is not a canonical encoding.
  if (bits != 0) return errc::invalid_data;
  return id;
}

}  // namespace ferry::coord
