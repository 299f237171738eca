#pragma once

#include <cstddef>
#include <span>

#include <boost/endian/conversion.hpp>

namespace ferry::bytes {

// Big-endian integers at a position of a byte buffer, as Kafka's formats and Ferry's own files store them. The
// caller checks the bounds.
template <typename T>
[[nodiscard]] T load_big(std::span<const std::byte> bytes, std::size_t at) {
  return boost::endian::endian_load<T, sizeof(T), boost::endian::order::big>(
      reinterpret_cast<const unsigned char*>(bytes.data() + at));
}

template <typename T>
void store_big(std::span<std::byte> bytes, std::size_t at, T value) {
  boost::endian::endian_store<T, sizeof(T), boost::endian::order::big>(
      reinterpret_cast<unsigned char*>(bytes.data() + at), value);
}

}  // namespace ferry::bytes
