#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ferry::bytes {

// CRC-32C (Castagnoli), the checksum of Kafka record batches. The implementation is chosen once, at run time,
// from those built for this architecture (bytes/crc32c_detail.h): on x86-64 the SSE4.2 crc32 instruction, on
// arm64 the ARMv8 CRC32 instructions (both over three interleaved streams), and a portable table-driven
// (slicing-by-8) one on any CPU that has neither.
[[nodiscard]] std::uint32_t crc32c(std::span<const std::byte> data);

// Extends a running CRC-32C over more data: crc32c_extend(crc32c(a), b) == crc32c(a + b).
[[nodiscard]] std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> data);

// The portable path, exposed so tests check it on machines whose CPU takes the other one.
[[nodiscard]] std::uint32_t crc32c_software_extend(std::uint32_t crc, std::span<const std::byte> data);

}  // namespace ferry::bytes
