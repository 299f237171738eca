#include "bytes/crc32c.h"

#include <boost/crc.hpp>
#include <cstring>
#include <nmmintrin.h>

namespace ferry::bytes {
namespace {

using software_crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

bool cpu_has_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}

// Works on the raw (uninverted) CRC register.
std::uint32_t hardware_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  std::uint64_t reg64 = reg;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    reg64 = _mm_crc32_u64(reg64, word);
    p += 8;
    n -= 8;
  }
  reg = static_cast<std::uint32_t>(reg64);
  while (n > 0) {
    reg = _mm_crc32_u8(reg, *p++);
    --n;
  }
  return reg;
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
