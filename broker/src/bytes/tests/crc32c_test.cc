#include "bytes/crc32c.h"

#include <gtest/gtest.h>

#include <string_view>

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
    EXPECT_EQ(crc32c_extend(crc32c(as_bytes(text.substr(0, cut))), as_bytes(text.substr(cut))),
              crc32c(as_bytes(text)))
        << "cut at " << cut;
    EXPECT_EQ(crc32c_software_extend(crc32c_software_extend(0, as_bytes(text.substr(0, cut))),
                                     as_bytes(text.substr(cut))),
              crc32c(as_bytes(text)))
        << "software, cut at " << cut;
  }
}

}  // namespace
}  // namespace ferry::bytes
