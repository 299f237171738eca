#include "bytes/crc32c.h"

#include <nmmintrin.h>

#include <array>
#include <cstring>
#include <vector>

#include <boost/crc.hpp>

namespace ferry::bytes {
namespace {

using software_crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

bool cpu_has_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}

// The hardware path works on the raw (uninverted) CRC register, where the update is linear: the register after
// A followed by B equals the register after A, advanced over |B| zero bytes, xor the register after B started
// from zero. That lets three independent streams keep the CPU's crc32 unit busy (one instruction issues per
// cycle but each takes three to finish), and a table-driven "advance over N zero bytes" joins them.

std::uint32_t serial_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  std::uint64_t reg64 = reg;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    reg64 = _mm_crc32_u64(reg64, word);
  }
  reg = static_cast<std::uint32_t>(reg64);
  for (; n > 0; ++p, --n) reg = _mm_crc32_u8(reg, *p);
  return reg;
}

// Advances a register over a fixed number of zero bytes with four byte-indexed lookups.
class zeros_operator {
 public:
  explicit zeros_operator(std::size_t zero_bytes) {
    const std::vector<unsigned char> zeros(zero_bytes, 0);
    std::array<std::uint32_t, 32> of_bit{};
    for (int bit = 0; bit < 32; ++bit) of_bit[bit] = serial_update(1u << bit, zeros.data(), zeros.size());
    for (int lane = 0; lane < 4; ++lane)
      for (unsigned value = 0; value < 256; ++value) {
        std::uint32_t sum = 0;
        for (int bit = 0; bit < 8; ++bit)
          if (value & (1u << bit)) sum ^= of_bit[lane * 8 + bit];
        table_[lane][value] = sum;
      }
  }
  [[nodiscard]] std::uint32_t apply(std::uint32_t reg) const {
    return table_[0][reg & 0xff] ^ table_[1][(reg >> 8) & 0xff] ^ table_[2][(reg >> 16) & 0xff] ^ table_[3][reg >> 24];
  }

 private:
  std::array<std::array<std::uint32_t, 256>, 4> table_{};
};

// Runs three streams of `stripe` bytes each while at least three stripes remain; returns the bytes consumed.
std::size_t three_way_update(std::uint32_t& reg, const unsigned char* p, std::size_t n, std::size_t stripe,
                             const zeros_operator& advance) {
  std::size_t done = 0;
  for (; n - done >= 3 * stripe; done += 3 * stripe) {
    const unsigned char* a = p + done;
    std::uint64_t r0 = reg, r1 = 0, r2 = 0;
    for (std::size_t i = 0; i < stripe; i += 8) {
      std::uint64_t w0, w1, w2;
      std::memcpy(&w0, a + i, 8);
      std::memcpy(&w1, a + stripe + i, 8);
      std::memcpy(&w2, a + 2 * stripe + i, 8);
      r0 = _mm_crc32_u64(r0, w0);
      r1 = _mm_crc32_u64(r1, w1);
      r2 = _mm_crc32_u64(r2, w2);
    }
    reg = advance.apply(advance.apply(static_cast<std::uint32_t>(r0)) ^ static_cast<std::uint32_t>(r1)) ^
          static_cast<std::uint32_t>(r2);
  }
  return done;
}

std::uint32_t hardware_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  constexpr std::size_t long_stripe = 8192;
  constexpr std::size_t short_stripe = 256;
  static const zeros_operator over_long(long_stripe);
  static const zeros_operator over_short(short_stripe);
  std::size_t done = three_way_update(reg, p, n, long_stripe, over_long);
  done += three_way_update(reg, p + done, n - done, short_stripe, over_short);
  return serial_update(reg, p + done, n - done);
}

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  if (cpu_has_sse42()) return ~hardware_update(~crc, p, data.size());
  return crc32c_software_extend(crc, data);
}

std::uint32_t crc32c_software_extend(std::uint32_t crc, std::span<const std::byte> data) {
  // Boost keeps a reflected CRC's register bit-reversed, so the previous result goes in reversed.
  std::uint32_t reg = ~crc;
  std::uint32_t reversed = 0;
  for (int bit = 0; bit < 32; ++bit) reversed |= ((reg >> bit) & 1u) << (31 - bit);
  software_crc32c engine;
  engine.reset(reversed);
  engine.process_bytes(data.data(), data.size());
  return engine.checksum();
}

std::uint32_t crc32c(std::span<const std::byte> data) { return crc32c_extend(0, data); }

}  // namespace ferry::bytes
