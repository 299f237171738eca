// The x86-64 path: SSE4.2's crc32 instruction over three interleaved streams. CMake builds this file with
// -msse4.2 on x86-64 only; crc32c.cc calls it only when the CPU has SSE4.2.
#include "bytes/crc32c_detail.h"

#if defined(FERRY_CRC32C_SSE42)

#include <nmmintrin.h>

#include "bytes/crc32c_interleave.h"

namespace ferry::bytes::detail {
namespace {

struct sse42_ops {
  // The 64-bit form keeps the register in a 64-bit value, so the loop needs no zero-extension between steps.
  using reg = std::uint64_t;
  static reg u64(reg r, std::uint64_t word) { return _mm_crc32_u64(r, word); }
  static std::uint32_t u8(std::uint32_t r, unsigned char b) { return _mm_crc32_u8(r, b); }
};

}  // namespace

std::uint32_t sse42_update(std::uint32_t reg, const unsigned char* p, std::size_t n) {
  return interleaved_update<sse42_ops>(reg, p, n);
}

}  // namespace ferry::bytes::detail

#endif
