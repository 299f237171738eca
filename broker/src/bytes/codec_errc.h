#pragma once

#include <system_error>

#include "base/error_category.h"

namespace ferry::bytes {

// Why the bytes of a Kafka "data" message (bytes/data_wire.h: the records of __consumer_offsets and
// __transaction_state, the consumer's embedded protocol) were refused. Header-only, so that the codecs' error category
// needs no source file of its own.
enum class codec_errc {
  truncated = 1,        // the input ends inside a field, or a length or count runs past its end
  invalid_length,       // a length or count below -1, or a varint longer than 5 bytes or above 2^32-1
  unexpected_null,      // a null length (-1, or 0 in compact form) for a field that cannot be null
  trailing_bytes,       // bytes left after the last field of the version
  unsupported_version,  // a value version Kafka never wrote, or a negative embedded-protocol version
};

inline const char* describe_codec_errc(codec_errc e) {
  switch (e) {
    case codec_errc::truncated:
      return "the record ends inside a field";
    case codec_errc::invalid_length:
      return "a length or count in the record is negative or out of range";
    case codec_errc::unexpected_null:
      return "a field that cannot be null is null";
    case codec_errc::trailing_bytes:
      return "bytes left after the record's last field";
    case codec_errc::unsupported_version:
      return "unknown record version";
  }
  return nullptr;
}

// An inline function's static is one object in the whole program, so error codes compare equal across
// translation units.
inline const std::error_category& codec_error_category() {
  static const enum_error_category<codec_errc> instance("data.codec", describe_codec_errc);
  return instance;
}

inline std::error_code make_error_code(codec_errc e) { return {static_cast<int>(e), codec_error_category()}; }

}  // namespace ferry::bytes

template <>
struct std::is_error_code_enum<ferry::bytes::codec_errc> : std::true_type {};
