// The arm64 path: the ARMv8 CRC32 instructions (__crc32cd, __crc32cb) over three interleaved streams. CMake
// builds this file with -march=armv8-a+crc on arm64 only; crc32c.cc calls it only when the kernel reports
// HWCAP_CRC32 (optional in ARMv8.0, mandatory from ARMv8.1).
#include "bytes/crc32c_detail.h"

#if defined(FERRY_CRC32C_ARMV8)

#include <arm_acle.h>

#include "bytes/crc32c_interleave.h"

namespace ferry::bytes::detail {
namespace {

struct armv8_ops {
  using reg = std::uint32_t;
  static reg u64(reg r, std::uint64_t word) { return __crc32cd(r, word); }
  static std::uint32_t u8(std::uint32_t r, unsigned char b) { return __crc32cb(r, b); }
};

}  // namespace

std::uint32_t armv8_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  return interleaved_update<armv8_ops>(reg, p, n);
}

}  // namespace ferry::bytes::detail

#endif
