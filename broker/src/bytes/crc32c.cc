// CRC-32C: the portable slicing-by-8 path and the run-time choice among the paths this architecture has
// (bytes/crc32c_detail.h lists them). This file is built with the project's default flags on every CPU.
#include "bytes/crc32c.h"

#include <array>
#include <vector>

#include "bytes/crc32c_detail.h"

#if defined(FERRY_CRC32C_ARMV8) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace ferry::bytes {
namespace {

// Slicing-by-8 tables of the reflected Castagnoli polynomial: table[0] advances the register over one byte,
// table[k] over one byte followed by k zero bytes, so eight lookups consume eight bytes.
constexpr std::uint32_t reflected_polynomial = 0x82F63B78;  // 0x1EDC6F41, bit-reversed

constexpr auto slicing_tables = [] {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t value = 0; value < 256; ++value) {
    std::uint32_t reg = value;
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ (reflected_polynomial & (0u - (reg & 1u)));
    t[0][value] = reg;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t value = 0; value < 256; ++value)
      t[k][value] = (t[k - 1][value] >> 8) ^ t[0][t[k - 1][value] & 0xff];
  return t;
}();

// Little-endian loads assembled from bytes, so the portable path is right on big-endian CPUs too; compilers
// turn them into one load on little-endian ones.
std::uint32_t load_le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

using update_fn = std::uint32_t (*)(std::uint32_t reg, const unsigned char* p, std::size_t n);

#if defined(FERRY_CRC32C_SSE42)
bool sse42_usable() {
  __builtin_cpu_init();  // needed when the first CRC is taken from another file's static initialiser
  return __builtin_cpu_supports("sse4.2");
}
#endif

#if defined(FERRY_CRC32C_ARMV8)
bool armv8_crc_usable() {
#if defined(__linux__)
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#elif defined(__ARM_FEATURE_CRC32)
  return true;
#else
  return false;
#endif
}
#endif

update_fn chosen_update() {
#if defined(FERRY_CRC32C_SSE42)
  if (sse42_usable()) return detail::sse42_update;
#endif
#if defined(FERRY_CRC32C_ARMV8)
  if (armv8_crc_usable()) return detail::armv8_update;
#endif
  return detail::portable_update;
}

template <update_fn Update>
std::uint32_t extend_with(std::uint32_t crc, std::span<const std::byte> data) {
  return ~Update(~crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

}  // namespace

namespace detail {

std::uint32_t portable_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  const auto& t = slicing_tables;
  for (; n >= 8; p += 8, n -= 8) {
    const std::uint32_t lo = load_le32(p) ^ reg;
    const std::uint32_t hi = load_le32(p + 4);
    reg = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) reg = t[0][(reg ^ *p) & 0xff] ^ (reg >> 8);
  return reg;
}

std::span<const crc32c_implementation> crc32c_implementations() {
  static const std::vector<crc32c_implementation> all = [] {
    std::vector<crc32c_implementation> built{{"portable", extend_with<portable_update>, true}};
#if defined(FERRY_CRC32C_SSE42)
    built.push_back({"sse4.2", extend_with<sse42_update>, sse42_usable()});
#endif
#if defined(FERRY_CRC32C_ARMV8)
    built.push_back({"armv8-crc", extend_with<armv8_update>, armv8_crc_usable()});
#endif
    return built;
  }();
  return all;
}

}  // namespace detail

std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> data) {
  // Chosen once; a function-local static, so callers from other files' static initialisers are safe.
  static const update_fn update = chosen_update();
  return ~update(~crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

std::uint32_t crc32c_software_extend(std::uint32_t crc, std::span<const std::byte> data) {
  return extend_with<detail::portable_update>(crc, data);
}

std::uint32_t crc32c(std::span<const std::byte> data) { return crc32c_extend(0, data); }

}  // namespace ferry::bytes
