#include "model/testing/batch_builder.h"

#include <cstring>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "bytes/varint.h"

namespace ferry::model::testing {
namespace {

class byte_sink {
 public:
  void uvarint(std::uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<std::byte>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<std::byte>(v));
  }
  void varint(std::int64_t v) { uvarint(bytes::zigzag_encode(v)); }
  void raw(const std::string& s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out.insert(out.end(), p, p + s.size());
  }
  void nullable(const std::optional<std::string>& s) {
    if (!s) {
      varint(-1);
      return;
    }
    varint(static_cast<std::int64_t>(s->size()));
    raw(*s);
  }
  template <typename T>
  void be(T v) {
    v = boost::endian::native_to_big(v);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  std::vector<std::byte> out;
};

}  // namespace

std::vector<std::byte> build_batch(const batch_spec& spec) {
  byte_sink records;
  std::int64_t max_delta = 0;
  for (std::size_t i = 0; i < spec.records.size(); ++i) {
    const auto& r = spec.records[i];
    byte_sink body;
    body.out.push_back(std::byte{0});  // attributes
    body.varint(r.timestamp_delta);
    body.varint(static_cast<std::int64_t>(i));
    body.nullable(r.key);
    body.nullable(r.value);
    body.varint(static_cast<std::int64_t>(r.headers.size()));
    for (const auto& [k, v] : r.headers) {
      body.varint(static_cast<std::int64_t>(k.size()));
      body.raw(k);
      body.varint(static_cast<std::int64_t>(v.size()));
      body.raw(v);
    }
    records.varint(static_cast<std::int64_t>(body.out.size()));
    records.out.insert(records.out.end(), body.out.begin(), body.out.end());
    max_delta = std::max(max_delta, r.timestamp_delta);
  }

  byte_sink batch;
  batch.be<std::int64_t>(spec.base_offset.value());
  batch.be<std::int32_t>(static_cast<std::int32_t>(batch_header_size - batch_log_overhead + records.out.size()));
  batch.be<std::int32_t>(-1);  // partition leader epoch
  batch.out.push_back(std::byte{current_magic});
  batch.be<std::uint32_t>(0);  // crc, filled below
  batch.be<std::int16_t>(spec.transactional ? 0x10 : 0);
  batch.be<std::int32_t>(static_cast<std::int32_t>(spec.records.size()) - 1);
  batch.be<std::int64_t>(spec.base_timestamp);
  batch.be<std::int64_t>(spec.base_timestamp + max_delta);
  batch.be<std::int64_t>(spec.producer.value());
  batch.be<std::int16_t>(spec.epoch.value());
  batch.be<std::int32_t>(spec.base_sequence);
  batch.be<std::int32_t>(static_cast<std::int32_t>(spec.records.size()));
  batch.out.insert(batch.out.end(), records.out.begin(), records.out.end());

  const std::uint32_t crc = boost::endian::native_to_big(bytes::crc32c(std::span(batch.out).subspan(21)));
  std::memcpy(batch.out.data() + 17, &crc, sizeof crc);
  return batch.out;
}

std::vector<std::byte> build_simple_batch(int n, offset base, std::int64_t base_timestamp) {
  batch_spec spec;
  spec.base_offset = base;
  spec.base_timestamp = base_timestamp;
  for (int i = 0; i < n; ++i) spec.records.push_back({"key-" + std::to_string(i), "value-" + std::to_string(i), {}, i});
  return build_batch(spec);
}

}  // namespace ferry::model::testing
