#include "bytes/varint.h"

#include <gtest/gtest.h>

#include <limits>

namespace ferry::bytes {
namespace {

TEST(varint, zigzag_round_trips) {
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, std::int64_t{-64}, std::int64_t{63},
                         std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_EQ(zigzag_decode(zigzag_encode(v)), v);
  }
  EXPECT_EQ(zigzag_encode(-1), 1u);
  EXPECT_EQ(zigzag_encode(1), 2u);
}

TEST(varint, sizes) {
  EXPECT_EQ(uvarint_size(0), 1);
  EXPECT_EQ(uvarint_size(127), 1);
  EXPECT_EQ(uvarint_size(128), 2);
  EXPECT_EQ(uvarint_size(~std::uint64_t{0}), 10);
}

}  // namespace
}  // namespace ferry::bytes
