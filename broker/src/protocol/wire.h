#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "bytes/varint.h"
#include "protocol/output_buffer.h"

namespace ferry::protocol {

using uuid = std::array<std::uint8_t, 16>;

// The records field of Produce and Fetch. Decoding yields a view of the request bytes (never a copy; the
// produce path rewrites offsets in place there). Encoding sends `bytes` followed by `files`, which go out
// with sendfile.
struct record_data {
  std::span<std::byte> bytes;
  std::vector<file_chunk> files;

  [[nodiscard]] std::size_t size() const {
    std::size_t n = bytes.size();
    for (const auto& f : files) n += f.length;
    return n;
  }
  // Equal when the byte views hold the same bytes; file pieces are compared by region.
  friend bool operator==(const record_data& a, const record_data& b) {
    if (a.bytes.size() != b.bytes.size() || a.files.size() != b.files.size()) return false;
    if (!a.bytes.empty() && std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()) != 0) return false;
    for (std::size_t i = 0; i < a.files.size(); ++i)
      if (a.files[i].fd != b.files[i].fd || a.files[i].position != b.files[i].position ||
          a.files[i].length != b.files[i].length)
        return false;
    return true;
  }
};

// Decodes Kafka primitives from one request frame. Malformed input never throws: the first failure (data
// running out, a negative or oversized length, an invalid varint) latches `ok() == false`, after which
// every read returns a zero value, so generated decoders run straight through and check once at the end.
class reader {
 public:
  explicit reader(std::span<std::byte> data) : data_(data) {}

  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] std::size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }
  [[nodiscard]] std::size_t position() const { return pos_; }
  void fail() { ok_ = false; }

  std::int8_t read_int8() { return read_be<std::int8_t>(); }
  std::int16_t read_int16() { return read_be<std::int16_t>(); }
  std::int32_t read_int32() { return read_be<std::int32_t>(); }
  std::int64_t read_int64() { return read_be<std::int64_t>(); }
  std::uint16_t read_uint16() { return read_be<std::uint16_t>(); }
  std::uint32_t read_uint32() { return read_be<std::uint32_t>(); }
  bool read_bool() { return read_int8() != 0; }
  double read_float64() {
    const auto bits = read_be<std::uint64_t>();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  uuid read_uuid() {
    uuid v{};
    if (std::span<std::byte> raw = take(v.size()); !raw.empty()) std::memcpy(v.data(), raw.data(), v.size());
    return v;
  }

  std::uint64_t read_uvarint() {
    std::uint64_t value = 0;
    const std::size_t n = ok_ ? bytes::decode_uvarint(data_.subspan(pos_), value) : 0;
    if (n == 0) {
      fail();
      return 0;
    }
    pos_ += n;
    return value;
  }
  std::int64_t read_varint() { return bytes::zigzag_decode(read_uvarint()); }

  // Length of a string, bytes or array field: -1 for null. Classic encodings use an int16 (strings) or int32
  // prefix; compact ones an unsigned varint of length + 1. A length that cannot fit in the remaining bytes
  // fails here, before anything is allocated.
  std::int64_t read_length(bool compact, bool int16_prefix) {
    std::int64_t n;
    if (compact)
      n = static_cast<std::int64_t>(read_uvarint()) - 1;
    else
      n = int16_prefix ? read_int16() : read_int32();
    if (!ok_) return -1;
    if (n < -1 || (n > 0 && static_cast<std::size_t>(n) > remaining())) {
      fail();
      return -1;
    }
    return n;
  }

  void read_string(bool compact, std::string& out) {
    const std::int64_t n = read_length(compact, true);
    if (n < 0) {
      if (ok_) fail();  // null where null is not allowed
      return;
    }
    const auto raw = take(static_cast<std::size_t>(n));
    out.assign(reinterpret_cast<const char*>(raw.data()), raw.size());
  }
  void read_nullable_string(bool compact, std::optional<std::string>& out) {
    const std::int64_t n = read_length(compact, true);
    if (n < 0) {
      out.reset();
      return;
    }
    const auto raw = take(static_cast<std::size_t>(n));
    out.emplace(reinterpret_cast<const char*>(raw.data()), raw.size());
  }
  void read_bytes(bool compact, std::vector<std::byte>& out) {
    const std::int64_t n = read_length(compact, false);
    if (n < 0) {
      if (ok_) fail();
      return;
    }
    const auto raw = take(static_cast<std::size_t>(n));
    out.assign(raw.begin(), raw.end());
  }
  void read_nullable_bytes(bool compact, std::optional<std::vector<std::byte>>& out) {
    const std::int64_t n = read_length(compact, false);
    if (n < 0) {
      out.reset();
      return;
    }
    const auto raw = take(static_cast<std::size_t>(n));
    out.emplace(raw.begin(), raw.end());
  }
  void read_records(bool compact, record_data& out) {
    const std::int64_t n = read_length(compact, false);
    out.bytes = n < 0 ? std::span<std::byte>{} : take(static_cast<std::size_t>(n));
  }
  void read_nullable_records(bool compact, std::optional<record_data>& out) {
    const std::int64_t n = read_length(compact, false);
    if (n < 0) {
      out.reset();
      return;
    }
    out.emplace().bytes = take(static_cast<std::size_t>(n));
  }

  // Reads a tagged-field section, calling on_field(tag, field_reader) for each field; on_field returns false
  // for tags it does not know, which are skipped as KIP-482 requires.
  template <typename OnField>
  void read_tagged_fields(OnField&& on_field) {
    const std::uint64_t count = read_uvarint();
    if (count > remaining()) {
      fail();
      return;
    }
    for (std::uint64_t i = 0; ok_ && i < count; ++i) {
      const std::uint64_t tag = read_uvarint();
      const std::uint64_t size = read_uvarint();
      if (!ok_ || size > remaining()) {
        fail();
        return;
      }
      reader field(take(static_cast<std::size_t>(size)));
      on_field(static_cast<std::uint32_t>(tag), field);
      if (!field.ok()) fail();
    }
  }

  std::span<std::byte> take(std::size_t n) {
    if (!ok_ || n > data_.size() - pos_) {
      ok_ = false;
      return {};
    }
    auto out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  template <typename T>
  T read_be() {
    const auto raw = take(sizeof(T));
    if (raw.empty()) return T{};
    T v;
    std::memcpy(&v, raw.data(), sizeof(T));
    return boost::endian::big_to_native(v);
  }

  std::span<std::byte> data_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Encodes Kafka primitives into an output_buffer.
class writer {
 public:
  explicit writer(output_buffer& out) : out_(out) {}

  void write_int8(std::int8_t v) { out_.append_byte(static_cast<std::byte>(v)); }
  void write_int16(std::int16_t v) { write_be(v); }
  void write_int32(std::int32_t v) { write_be(v); }
  void write_int64(std::int64_t v) { write_be(v); }
  void write_uint16(std::uint16_t v) { write_be(v); }
  void write_uint32(std::uint32_t v) { write_be(v); }
  void write_bool(bool v) { write_int8(v ? 1 : 0); }
  void write_float64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof v);
    write_be(bits);
  }
  void write_uuid(const uuid& v) { out_.append(std::as_bytes(std::span(v))); }

  void write_uvarint(std::uint64_t v) {
    std::byte raw[bytes::max_varint_bytes];
    out_.append(std::span<const std::byte>(raw, bytes::encode_uvarint(v, raw)));
  }
  void write_varint(std::int64_t v) { write_uvarint(bytes::zigzag_encode(v)); }

  // -1 writes null.
  void write_length(bool compact, bool int16_prefix, std::int64_t n) {
    if (compact)
      write_uvarint(static_cast<std::uint64_t>(n + 1));
    else if (int16_prefix)
      write_int16(static_cast<std::int16_t>(n));
    else
      write_int32(static_cast<std::int32_t>(n));
  }

  void write_string(bool compact, const std::string& s) {
    write_length(compact, true, static_cast<std::int64_t>(s.size()));
    out_.append(std::as_bytes(std::span(s)));
  }
  void write_nullable_string(bool compact, const std::optional<std::string>& s) {
    if (!s)
      write_length(compact, true, -1);
    else
      write_string(compact, *s);
  }
  void write_bytes(bool compact, const std::vector<std::byte>& b) {
    write_length(compact, false, static_cast<std::int64_t>(b.size()));
    out_.append(b);
  }
  void write_nullable_bytes(bool compact, const std::optional<std::vector<std::byte>>& b) {
    if (!b)
      write_length(compact, false, -1);
    else
      write_bytes(compact, *b);
  }
  void write_records(bool compact, const record_data& r) {
    write_length(compact, false, static_cast<std::int64_t>(r.size()));
    out_.append(r.bytes);
    for (const auto& f : r.files) out_.append_file(f);
  }
  void write_nullable_records(bool compact, const std::optional<record_data>& r) {
    if (!r)
      write_length(compact, false, -1);
    else
      write_records(compact, *r);
  }

  void append(output_buffer&& other) { out_.append(std::move(other)); }
  [[nodiscard]] std::size_t size() const { return out_.size(); }

 private:
  template <typename T>
  void write_be(T v) {
    v = boost::endian::native_to_big(v);
    out_.append(std::as_bytes(std::span(&v, 1)));
  }

  output_buffer& out_;
};

}  // namespace ferry::protocol
