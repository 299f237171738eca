#pragma once

// The CRC-32C implementations behind bytes/crc32c.h, for the files of bytes/ and for tests; other code calls
// crc32c() and crc32c_extend(), which pick one of these once, at run time.
//
// Which ones a build has depends on the target architecture (CMake adds the file of each, and each file is also
// guarded by the compiler's architecture macro):
//   - portable (crc32c.cc): slicing-by-8 tables, any CPU;
//   - sse4.2 (crc32c_sse42.cc, x86-64 only, built with -msse4.2): the crc32 instruction, taken when
//     __builtin_cpu_supports("sse4.2");
//   - armv8-crc (crc32c_armv8.cc, arm64 only, built with -march=armv8-a+crc): __crc32cd/__crc32cb, taken when
//     getauxval(AT_HWCAP) has HWCAP_CRC32 (little-endian arm64; the loop loads words in CPU order).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#if defined(__x86_64__)
#define FERRY_CRC32C_SSE42 1
#endif
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FERRY_CRC32C_ARMV8 1
#endif

namespace ferry::bytes::detail {

// The updates work on the raw CRC register, the complement of a crc32c() value: crc32c_extend(crc, data) is
// ~update(~crc, data).
std::uint32_t portable_update(std::uint32_t reg, const unsigned char* p, std::size_t n);
#if defined(FERRY_CRC32C_SSE42)
std::uint32_t sse42_update(std::uint32_t reg, const unsigned char* p, std::size_t n);
#endif
#if defined(FERRY_CRC32C_ARMV8)
std::uint32_t armv8_update(std::uint32_t reg, const unsigned char* p, std::size_t n);
#endif

// One implementation built into this binary. `extend` has crc32c_extend's contract; `usable` says whether this
// CPU can run it.
struct crc32c_implementation {
  std::string_view name;
  std::uint32_t (*extend)(std::uint32_t crc, std::span<const std::byte> data);
  bool usable;
};

// Every implementation built for this architecture, the portable one first. crc32c_extend() uses the last
// usable one.
[[nodiscard]] std::span<const crc32c_implementation> crc32c_implementations();

}  // namespace ferry::bytes::detail
