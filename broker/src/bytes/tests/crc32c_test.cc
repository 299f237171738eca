#include "bytes/crc32c.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace ferry::bytes {
namespace {

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(crc32c, matches_the_standard_check_value) {
  // The catalogued check value of CRC-32C over the ASCII digits 1..9.
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(as_bytes("")), 0u);
  EXPECT_EQ(crc32c_software_extend(0, as_bytes("123456789")), 0xE3069283u);
}

TEST(crc32c, extends_across_pieces) {
  const std::string_view text = "The quick brown fox jumps over the lazy dog, twice over for length.";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(crc32c_extend(crc32c(as_bytes(text.substr(0, cut))), as_bytes(text.substr(cut))), crc32c(as_bytes(text)))
        << "cut at " << cut;
    EXPECT_EQ(
        crc32c_software_extend(crc32c_software_extend(0, as_bytes(text.substr(0, cut))), as_bytes(text.substr(cut))),
        crc32c(as_bytes(text)))
        << "software, cut at " << cut;
  }
}

// Long inputs take the three-stream path (stripes of 8 KiB and 256 B); every length around the stripe edges,
// at every alignment, must give what the one-byte-at-a-time software path gives.
TEST(crc32c, long_inputs_match_the_software_path) {
  std::vector<std::byte> data(3 * 8192 * 2 + 3 * 256 + 64);
  std::uint32_t x = 12345;
  for (auto& b : data) b = static_cast<std::byte>((x = x * 1103515245 + 12345) >> 16);
  for (std::size_t length : {std::size_t{767}, std::size_t{768}, std::size_t{769}, std::size_t{3 * 8192 - 1},
                             std::size_t{3 * 8192}, std::size_t{3 * 8192 + 3 * 256 + 7}, data.size() - 8}) {
    for (std::size_t offset = 0; offset < 8; ++offset) {
      const std::span<const std::byte> piece(data.data() + offset, length);
      EXPECT_EQ(crc32c(piece), crc32c_software_extend(0, piece)) << "length " << length << " offset " << offset;
      EXPECT_EQ(crc32c_extend(0x1234abcd, piece), crc32c_software_extend(0x1234abcd, piece)) << "length " << length;
    }
  }
}

}  // namespace
}  // namespace ferry::bytes
