#pragma once

// Kafka's primitive types as its generated classes read and write "data" messages (the records of
// __consumer_offsets and __transaction_state, the consumer's embedded protocol). Classic versions:
// big-endian int16/int32/int64; a string is an int16 length and its UTF-8 bytes, bytes an int32 length, an
// array an int32 count, -1 meaning null. Flexible versions (KIP-482) use the compact forms instead, an
// unsigned varint of length + 1 with 0 meaning null, and end every struct with a tagged-field section: an
// unsigned varint count, then per field an unsigned varint tag, an unsigned varint size and that many bytes.
//
// protocol/wire.h has the request codec's reader and writer; the coordinators' libraries may not use
// `protocol`, and only need the owned, bounds-checked subset below.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "base/result.h"
#include "bytes/codec_errc.h"
#include "bytes/varint.h"

namespace ferry::bytes::data_wire {

enum class encoding { classic, flexible };

// The longest string Kafka reads or writes, in either encoding (its generated classes refuse longer compact
// strings too).
inline constexpr std::size_t max_string_bytes = std::numeric_limits<std::int16_t>::max();

// Reads one message from a buffer it does not own. The first failure latches: later reads return zero values
// and do not move, so a decoder reads straight through its fields and checks once, in finish(). Lengths and
// counts are checked against the bytes left before anything is allocated.
class reader {
 public:
  explicit reader(std::span<const std::byte> in) : in_(in) {}

  [[nodiscard]] bool ok() const { return !error_; }
  [[nodiscard]] std::error_code error() const { return error_; }
  [[nodiscard]] std::size_t remaining() const { return in_.size() - pos_; }
  void fail(codec_errc e) {
    if (!error_) error_ = e;
  }

  std::int8_t int8() { return read_be<std::int8_t>(); }
  std::int16_t int16() { return read_be<std::int16_t>(); }
  std::int32_t int32() { return read_be<std::int32_t>(); }
  std::int64_t int64() { return read_be<std::int64_t>(); }
  std::array<std::uint8_t, 16> uuid() {
    std::array<std::uint8_t, 16> out{};
    const auto raw = take(out.size());
    if (raw.size() == out.size()) std::memcpy(out.data(), raw.data(), out.size());
    return out;
  }

  std::string string(encoding e) {
    const auto n = length(e, true);
    if (!n) {
      fail(codec_errc::unexpected_null);
      return {};
    }
    return to_string(take(*n));
  }
  std::optional<std::string> nullable_string(encoding e) {
    const auto n = length(e, true);
    if (!n || !ok()) return std::nullopt;
    return to_string(take(*n));
  }
  std::vector<std::byte> bytes(encoding e) {
    const auto n = length(e, false);
    if (!n) {
      fail(codec_errc::unexpected_null);
      return {};
    }
    const auto raw = take(*n);
    return {raw.begin(), raw.end()};
  }
  std::optional<std::vector<std::byte>> nullable_bytes(encoding e) {
    const auto n = length(e, false);
    if (!n || !ok()) return std::nullopt;
    const auto raw = take(*n);
    return std::vector<std::byte>(raw.begin(), raw.end());
  }

  // The element count of an array that cannot be null, each element taking at least `min_element_bytes` on
  // the wire: a count the bytes left cannot hold fails here, so the caller may reserve it.
  std::size_t array_length(encoding e, std::size_t min_element_bytes) {
    const auto n = length(e, false, std::max<std::size_t>(min_element_bytes, 1));
    if (!n) {
      fail(codec_errc::unexpected_null);
      return 0;
    }
    return *n;
  }

  // The element count of a nullable array, 0 for null.
  std::size_t nullable_array_length(encoding e, std::size_t min_element_bytes) {
    return length(e, false, std::max<std::size_t>(min_element_bytes, 1)).value_or(0);
  }

  // Reads a tagged-field section, handing each field's tag and bytes to `field`.
  template <typename F>
  void tagged_fields(F&& field) {
    const std::uint64_t count = uvarint32();
    for (std::uint64_t i = 0; i < count && ok(); ++i) {
      const auto tag = static_cast<std::uint32_t>(uvarint32());
      const std::uint64_t size = uvarint32();
      const auto data = take(size);
      if (ok()) field(tag, data);
    }
  }
  // Skips a tagged-field section, for records that carry nothing Ferry needs there (OffsetCommitValue v4's
  // tag 0 is the topic id).
  void skip_tagged_fields() {
    tagged_fields([](std::uint32_t, std::span<const std::byte>) {});
  }

  // The end of a message: the first error, or trailing_bytes when input is left and `allow_trailing` is
  // false.
  result<void> finish(bool allow_trailing = false) const {
    if (error_) return error_;
    if (!allow_trailing && remaining() != 0) return codec_errc::trailing_bytes;
    return success();
  }

 private:
  // Kafka's readUnsignedVarint: at most 5 bytes, and the value fits in 32 bits.
  std::uint64_t uvarint32() {
    if (!ok()) return 0;
    std::uint64_t value = 0;
    const auto rest = in_.subspan(pos_);
    const std::size_t n = bytes::decode_uvarint(rest.first(std::min<std::size_t>(rest.size(), 5)), value);
    if (n == 0) {
      // Input ending inside the varint is a truncation; five bytes that do not end it are an invalid varint.
      fail(rest.size() < 5 ? codec_errc::truncated : codec_errc::invalid_length);
      return 0;
    }
    if (value > std::numeric_limits<std::uint32_t>::max()) {
      fail(codec_errc::invalid_length);
      return 0;
    }
    pos_ += n;
    return value;
  }

  // A length or count of elements of at least `unit` bytes each; nullopt for null, 0 after a failure (with
  // the error latched).
  std::optional<std::size_t> length(encoding e, bool int16_prefix, std::size_t unit = 1) {
    std::int64_t n = 0;
    if (e == encoding::flexible)
      n = static_cast<std::int64_t>(uvarint32()) - 1;
    else
      n = int16_prefix ? int16() : int32();
    if (!ok()) return std::size_t{0};
    if (n == -1) return std::nullopt;
    if (n < -1) {
      fail(codec_errc::invalid_length);
      return std::size_t{0};
    }
    const auto count = static_cast<std::size_t>(n);
    if (int16_prefix && count > max_string_bytes) {
      fail(codec_errc::invalid_length);
      return std::size_t{0};
    }
    if (count > remaining() / unit) {
      fail(codec_errc::truncated);
      return std::size_t{0};
    }
    return count;
  }

  std::span<const std::byte> take(std::uint64_t n) {
    if (!ok()) return {};
    if (n > remaining()) {
      fail(codec_errc::truncated);
      return {};
    }
    const auto out = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }

  static std::string to_string(std::span<const std::byte> raw) {
    return {reinterpret_cast<const char*>(raw.data()), raw.size()};
  }

  template <typename T>
  T read_be() {
    const auto raw = take(sizeof(T));
    if (raw.size() != sizeof(T)) return T{};
    T v;
    std::memcpy(&v, raw.data(), sizeof(T));
    return boost::endian::big_to_native(v);
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::error_code error_;
};

// Writes one message. A length that its field cannot hold (a string over 32767 bytes, bytes or an array over
// 2^31-1 long) latches overflow() instead of writing a wrong prefix.
class writer {
 public:
  [[nodiscard]] bool overflow() const { return overflow_; }

  void int8(std::int8_t v) { write_be(v); }
  void int16(std::int16_t v) { write_be(v); }
  void int32(std::int32_t v) { write_be(v); }
  void int64(std::int64_t v) { write_be(v); }
  void uuid(const std::array<std::uint8_t, 16>& id) { append(std::as_bytes(std::span(id))); }

  void string(std::string_view s, encoding e) {
    length(s.size(), e, true);
    append(std::as_bytes(std::span(s.data(), s.size())));
  }
  void nullable_string(const std::optional<std::string>& s, encoding e) {
    if (s)
      string(*s, e);
    else
      null(e, true);
  }
  void bytes(std::span<const std::byte> b, encoding e) {
    length(b.size(), e, false);
    append(b);
  }
  void nullable_bytes(const std::optional<std::vector<std::byte>>& b, encoding e) {
    if (b)
      bytes(*b, e);
    else
      null(e, false);
  }
  void array_length(std::size_t n, encoding e) { length(n, e, false); }
  void null_array(encoding e) { null(e, false); }
  void empty_tagged_fields() { uvarint(0); }
  // A tagged-field section: its field count, then each field by tagged_field(), in increasing tag order.
  void tagged_field_count(std::size_t n) { uvarint(n); }
  void tagged_field(std::uint32_t tag, std::span<const std::byte> data) {
    uvarint(tag);
    uvarint(data.size());
    append(data);
  }

  // The message; empty after an overflow, which no valid message is.
  std::vector<std::byte> take() && {
    if (overflow_) return {};
    return std::move(out_);
  }

 private:
  void length(std::size_t n, encoding e, bool int16_prefix) {
    if (n > (int16_prefix ? max_string_bytes : static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())))
      overflow_ = true;
    if (e == encoding::flexible)
      uvarint(static_cast<std::uint64_t>(n) + 1);
    else if (int16_prefix)
      int16(static_cast<std::int16_t>(n));
    else
      int32(static_cast<std::int32_t>(n));
  }
  void null(encoding e, bool int16_prefix) {
    if (e == encoding::flexible)
      uvarint(0);
    else if (int16_prefix)
      int16(-1);
    else
      int32(-1);
  }
  void uvarint(std::uint64_t v) {
    std::byte raw[bytes::max_varint_bytes];
    append(std::span<const std::byte>(raw, bytes::encode_uvarint(v, raw)));
  }
  template <typename T>
  void write_be(T v) {
    v = boost::endian::native_to_big(v);
    append(std::as_bytes(std::span(&v, 1)));
  }
  void append(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }

  std::vector<std::byte> out_;
  bool overflow_ = false;
};

}  // namespace ferry::bytes::data_wire
