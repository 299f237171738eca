#pragma once

// The three-stream CRC-32C loop shared by the hardware paths (crc32c_sse42.cc, crc32c_armv8.cc); internal to
// bytes/.
//
// It works on the raw (uninverted) CRC register, where the update is linear: the register after A followed by B
// equals the register after A, advanced over |B| zero bytes, xor the register after B started from zero. That
// lets three independent streams keep the CPU's CRC unit busy (one instruction issues per cycle but each takes
// about three to finish), and a table-driven "advance over N zero bytes" joins them.
//
// `Ops` supplies the instructions: a register type `reg` and
//   static reg u64(reg r, std::uint64_t little_endian_word);
//   static std::uint32_t u8(std::uint32_t r, unsigned char b);
// Each including file instantiates these templates with an Ops type of its own in an unnamed namespace, so the
// code built with that file's target flags (-msse4.2, +crc) has internal linkage and stays in that file.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ferry::bytes::detail {

template <class Ops>
std::uint32_t serial_update(std::uint32_t reg32, const unsigned char* p, std::size_t n) {
  typename Ops::reg reg = reg32;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    reg = Ops::u64(reg, word);
  }
  reg32 = static_cast<std::uint32_t>(reg);
  for (; n > 0; ++p, --n) reg32 = Ops::u8(reg32, *p);
  return reg32;
}

// Advances a register over a fixed number of zero bytes with four byte-indexed lookups.
template <class Ops>
class zeros_operator {
 public:
  explicit zeros_operator(std::size_t zero_bytes) {
    const std::vector<unsigned char> zeros(zero_bytes, 0);
    std::array<std::uint32_t, 32> of_bit{};
    for (int bit = 0; bit < 32; ++bit) of_bit[bit] = serial_update<Ops>(1u << bit, zeros.data(), zeros.size());
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
template <class Ops>
std::size_t three_way_update(std::uint32_t& reg, const unsigned char* p, std::size_t n, std::size_t stripe,
                             const zeros_operator<Ops>& advance) {
  std::size_t done = 0;
  for (; n - done >= 3 * stripe; done += 3 * stripe) {
    const unsigned char* a = p + done;
    typename Ops::reg r0 = reg, r1 = 0, r2 = 0;
    for (std::size_t i = 0; i < stripe; i += 8) {
      std::uint64_t w0, w1, w2;
      std::memcpy(&w0, a + i, 8);
      std::memcpy(&w1, a + stripe + i, 8);
      std::memcpy(&w2, a + 2 * stripe + i, 8);
      r0 = Ops::u64(r0, w0);
      r1 = Ops::u64(r1, w1);
      r2 = Ops::u64(r2, w2);
    }
    reg = advance.apply(advance.apply(static_cast<std::uint32_t>(r0)) ^ static_cast<std::uint32_t>(r1)) ^
          static_cast<std::uint32_t>(r2);
  }
  return done;
}

// Stripes of 8 KiB for long inputs, then of 256 bytes, then one stream for the rest. Inputs shorter than three
// short stripes go straight to the one stream, without touching the tables.
template <class Ops>
std::uint32_t interleaved_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  constexpr std::size_t long_stripe = 8192;
  constexpr std::size_t short_stripe = 256;
  std::size_t done = 0;
  if (n >= 3 * short_stripe) {
    static const zeros_operator<Ops> over_long(long_stripe);
    static const zeros_operator<Ops> over_short(short_stripe);
    done = three_way_update<Ops>(reg, p, n, long_stripe, over_long);
    done += three_way_update<Ops>(reg, p + done, n - done, short_stripe, over_short);
  }
  return serial_update<Ops>(reg, p + done, n - done);
}

}  // namespace ferry::bytes::detail
