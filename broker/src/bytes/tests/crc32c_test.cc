#include "bytes/crc32c.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <boost/crc.hpp>

#include "bytes/crc32c_detail.h"

namespace ferry::bytes {
namespace {

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::vector<std::byte> pseudo_random_bytes(std::size_t n) {
  std::vector<std::byte> data(n);
  std::uint32_t x = 12345;
  for (auto& b : data) b = static_cast<std::byte>((x = x * 1103515245 + 12345) >> 16);
  return data;
}

// An oracle independent of ours: Boost.CRC's table-driven CRC-32C, from a fresh start.
std::uint32_t boost_crc32c(std::span<const std::byte> data) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> engine;
  engine.process_bytes(data.data(), data.size());
  return engine.checksum();
}

// The implementations this CPU can run: the portable one always, and the hardware path of this architecture
// when the CPU has it.
std::vector<detail::crc32c_implementation> usable_implementations() {
  std::vector<detail::crc32c_implementation> usable;
  for (const auto& impl : detail::crc32c_implementations())
    if (impl.usable) usable.push_back(impl);
  return usable;
}

TEST(crc32c, matches_the_standard_check_value) {
  // The catalogued check value of CRC-32C over the ASCII digits 1..9.
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(as_bytes("")), 0u);
  EXPECT_EQ(crc32c_software_extend(0, as_bytes("123456789")), 0xE3069283u);
}

TEST(crc32c, builds_the_hardware_path_of_this_architecture) {
  std::vector<std::string> names;
  for (const auto& impl : detail::crc32c_implementations()) names.emplace_back(impl.name);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "portable");
#if defined(__x86_64__)
  EXPECT_NE(std::find(names.begin(), names.end(), "sse4.2"), names.end());
#endif
#if defined(__aarch64__)
  EXPECT_NE(std::find(names.begin(), names.end(), "armv8-crc"), names.end());
#endif
}

// "123456789" and the CRC-32C examples of RFC 3720, appendix B.4, through every implementation.
TEST(crc32c, every_implementation_gives_the_known_vectors) {
  std::vector<std::byte> zeros(32, std::byte{0}), ones(32, std::byte{0xff}), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<std::byte>(i);
    down[i] = static_cast<std::byte>(31 - i);
  }
  for (const auto& impl : usable_implementations()) {
    SCOPED_TRACE(impl.name);
    EXPECT_EQ(impl.extend(0, as_bytes("123456789")), 0xE3069283u);
    EXPECT_EQ(impl.extend(0, {}), 0u);
    EXPECT_EQ(impl.extend(0, zeros), 0x8A9136AAu);
    EXPECT_EQ(impl.extend(0, ones), 0x62A8AB43u);
    EXPECT_EQ(impl.extend(0, up), 0x46DD794Eu);
    EXPECT_EQ(impl.extend(0, down), 0x113FDB5Cu);
  }
}

// Every length up to 1 KiB at every alignment to 16 bytes, from a fresh start and from a running CRC, against
// Boost.CRC and the portable path.
TEST(crc32c, implementations_agree_at_every_length_and_alignment) {
  const auto data = pseudo_random_bytes(1024 + 16);
  const auto impls = usable_implementations();
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t length = 0; length <= 1024; ++length) {
      const std::span<const std::byte> piece(data.data() + offset, length);
      const std::uint32_t expected = boost_crc32c(piece);
      const std::uint32_t expected_extended = detail::crc32c_implementations().front().extend(0x1234abcd, piece);
      for (const auto& impl : impls) {
        ASSERT_EQ(impl.extend(0, piece), expected) << impl.name << " length " << length << " offset " << offset;
        ASSERT_EQ(impl.extend(0x1234abcd, piece), expected_extended)
            << impl.name << " extended, length " << length << " offset " << offset;
      }
      ASSERT_EQ(crc32c(piece), expected) << "length " << length << " offset " << offset;
    }
  }
}

TEST(crc32c, extends_across_pieces) {
  const std::string_view text = "The quick brown fox jumps over the lazy dog, twice over for length.";
  for (const auto& impl : usable_implementations()) {
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
      EXPECT_EQ(impl.extend(impl.extend(0, as_bytes(text.substr(0, cut))), as_bytes(text.substr(cut))),
                crc32c(as_bytes(text)))
          << impl.name << ", cut at " << cut;
    }
  }
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
// at every alignment, must give what Boost.CRC gives, through every implementation and crc32c() itself.
TEST(crc32c, long_inputs_match_across_stripe_edges) {
  const auto data = pseudo_random_bytes(3 * 8192 * 2 + 3 * 256 + 64);
  const auto impls = usable_implementations();
  std::vector<std::size_t> lengths;
  for (std::size_t edge : {std::size_t{3 * 256}, std::size_t{2 * 3 * 256}, std::size_t{3 * 8192},
                           std::size_t{3 * 8192 + 3 * 256}, std::size_t{2 * 3 * 8192}})
    for (std::size_t delta = 0; delta <= 16; ++delta) {
      lengths.push_back(edge - 8 + delta);
    }
  lengths.push_back(data.size() - 16);
  for (std::size_t length : lengths) {
    for (std::size_t offset = 0; offset < 16; ++offset) {
      const std::span<const std::byte> piece(data.data() + offset, length);
      const std::uint32_t expected = boost_crc32c(piece);
      const std::uint32_t expected_extended = crc32c_software_extend(0x1234abcd, piece);
      EXPECT_EQ(crc32c(piece), expected) << "length " << length << " offset " << offset;
      for (const auto& impl : impls) {
        EXPECT_EQ(impl.extend(0, piece), expected) << impl.name << " length " << length << " offset " << offset;
        EXPECT_EQ(impl.extend(0x1234abcd, piece), expected_extended)
            << impl.name << " extended, length " << length << " offset " << offset;
      }
    }
  }
}

}  // namespace
}  // namespace ferry::bytes
