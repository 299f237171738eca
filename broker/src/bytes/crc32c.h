#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ferry::bytes {

// CRC-32C (Castagnoli), the checksum of Kafka record batches. Uses the CPU's crc32 instruction when
// present (SSE4.2) and Boost.CRC otherwise.
[[nodiscard]] std::uint32_t crc32c(std::span<const std::byte> data);

// Extends a running CRC-32C over more data: crc32c_extend(crc32c(a), b) == crc32c(a + b).
[[nodiscard]] std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> data);

// The portable path, exposed so tests check it on machines whose CPU takes the other one.
[[nodiscard]] std::uint32_t crc32c_software_extend(std::uint32_t crc, std::span<const std::byte> data);

}  // namespace ferry::bytes
