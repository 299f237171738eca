#pragma once

// Builds expected bytes by hand, field by field from Kafka's schemas, independently of group/wire.h: the
// tests compare the codecs' output with these and feed these to the decoders.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "bytes/codec_errc.h"

namespace ferry::group::testing {

class hand_bytes {
 public:
  hand_bytes& i8(std::uint8_t v) {
    out_.push_back(static_cast<std::byte>(v));
    return *this;
  }
  hand_bytes& i16(std::int16_t v) { return big_endian(static_cast<std::uint16_t>(v), 2); }
  hand_bytes& i32(std::int32_t v) { return big_endian(static_cast<std::uint32_t>(v), 4); }
  hand_bytes& i64(std::int64_t v) { return big_endian(static_cast<std::uint64_t>(v), 8); }
  // Raw bytes, for varints and lengths written out in the test.
  hand_bytes& raw(std::initializer_list<std::uint8_t> bytes) {
    for (const std::uint8_t b : bytes) i8(b);
    return *this;
  }
  hand_bytes& text(std::string_view s) {
    for (const char c : s) i8(static_cast<std::uint8_t>(c));
    return *this;
  }
  // A classic string: int16 length, then the bytes.
  hand_bytes& str(std::string_view s) { return i16(static_cast<std::int16_t>(s.size())).text(s); }
  // A compact string of fewer than 127 bytes: its length + 1 in one varint byte, then the bytes.
  hand_bytes& compact_str(std::string_view s) { return i8(static_cast<std::uint8_t>(s.size() + 1)).text(s); }
  // Classic bytes: int32 length, then the bytes (here: text).
  hand_bytes& blob(std::string_view s) { return i32(static_cast<std::int32_t>(s.size())).text(s); }
  hand_bytes& compact_blob(std::string_view s) { return compact_str(s); }

  // A copy: the builder is usually a temporary, gone before a range-for over a reference would end.
  [[nodiscard]] std::vector<std::byte> bytes() const { return out_; }

 private:
  hand_bytes& big_endian(std::uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) i8(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }

  std::vector<std::byte> out_;
};

inline std::vector<std::byte> to_bytes(std::string_view s) {
  std::vector<std::byte> out;
  for (const char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

// Every proper prefix of a valid encoding is refused as truncated: every field is mandatory.
template <typename Decode>
void expect_every_prefix_truncated(const std::vector<std::byte>& valid, Decode decode) {
  for (std::size_t n = 0; n < valid.size(); ++n) {
    const auto decoded = decode(std::span(valid).first(n));
    ASSERT_FALSE(decoded) << "prefix of " << n << " bytes of " << valid.size();
    EXPECT_EQ(decoded.error(), bytes::codec_errc::truncated) << "prefix of " << n << " bytes";
  }
}

}  // namespace ferry::group::testing
