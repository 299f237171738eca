#include "model/batch_builder.h"

#include <algorithm>
#include <cstring>

#include <boost/endian/conversion.hpp>

#include "bytes/varint.h"
#include "model/compression.h"
#include "model/records.h"

namespace ferry::model {
namespace {

void put_varint(std::vector<std::byte>& out, std::int64_t v) {
  std::byte raw[bytes::max_varint_bytes];
  const std::size_t n = bytes::encode_varint(v, raw);
  out.insert(out.end(), raw, raw + n);
}

template <typename T>
void put_be(std::vector<std::byte>& out, T v) {
  v = boost::endian::native_to_big(v);
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

}  // namespace

void batch_builder::varint(std::int64_t v) { put_varint(body_, v); }

void batch_builder::bytes(std::optional<std::span<const std::byte>> b) {
  if (!b) {
    varint(-1);
    return;
  }
  varint(static_cast<std::int64_t>(b->size()));
  body_.insert(body_.end(), b->begin(), b->end());
}

void batch_builder::begin_record(std::int64_t timestamp, std::size_t body_size_hint) {
  if (count_ == 0) base_timestamp_ = options_.base_timestamp.value_or(timestamp);
  max_timestamp_ = count_ == 0 ? timestamp : std::max(max_timestamp_, timestamp);
  body_.clear();
  body_.reserve(body_size_hint);
  body_.push_back(std::byte{0});  // attributes
  varint(timestamp - base_timestamp_);
  varint(count_);
}

void batch_builder::add(std::int64_t timestamp, std::optional<std::span<const std::byte>> key,
                        std::optional<std::span<const std::byte>> value, std::span<const header> headers) {
  begin_record(timestamp, 16 + (key ? key->size() : 0) + (value ? value->size() : 0));
  bytes(key);
  bytes(value);
  varint(static_cast<std::int64_t>(headers.size()));
  for (const auto& [name, content] : headers) {
    bytes(std::as_bytes(std::span(name.data(), name.size())));
    bytes(content);
  }
  put_varint(records_, static_cast<std::int64_t>(body_.size()));
  records_.insert(records_.end(), body_.begin(), body_.end());
  ++count_;
}

void batch_builder::add_encoded(std::int64_t timestamp, std::optional<std::span<const std::byte>> key,
                                std::optional<std::span<const std::byte>> value, std::int32_t header_count,
                                std::span<const std::byte> encoded_headers) {
  begin_record(timestamp, 16 + (key ? key->size() : 0) + (value ? value->size() : 0) + encoded_headers.size());
  bytes(key);
  bytes(value);
  varint(header_count);
  body_.insert(body_.end(), encoded_headers.begin(), encoded_headers.end());
  put_varint(records_, static_cast<std::int64_t>(body_.size()));
  records_.insert(records_.end(), body_.begin(), body_.end());
  ++count_;
}

result<std::vector<std::byte>> batch_builder::finish() const {
  if (count_ == 0) return errc::invalid_record_count;
  std::vector<std::byte> out;
  out.reserve(batch_header_size + records_.size());
  put_be<std::int64_t>(out, options_.base_offset.value());
  put_be<std::int32_t>(out, 0);  // batch length, set below
  put_be<std::int32_t>(out, options_.partition_leader_epoch.value());
  out.push_back(std::byte{current_magic});
  put_be<std::uint32_t>(out, 0);  // CRC, set below
  std::int16_t attributes = static_cast<std::int16_t>(options_.codec);
  if (options_.timestamps == timestamp_type::log_append_time) attributes |= 0x08;
  if (options_.transactional) attributes |= 0x10;
  if (options_.control) attributes |= 0x20;
  put_be<std::int16_t>(out, attributes);
  put_be<std::int32_t>(out, count_ - 1);  // last offset delta
  put_be<std::int64_t>(out, base_timestamp_);
  put_be<std::int64_t>(out, max_timestamp_);
  put_be<std::int64_t>(out, options_.producer.value());
  put_be<std::int16_t>(out, options_.epoch.value());
  put_be<std::int32_t>(out, options_.base_sequence);
  put_be<std::int32_t>(out, count_);
  FERRY_TRY(compress(options_.codec, records_, out));
  set_records_codec(out, options_.codec);
  return out;
}

result<std::vector<std::byte>> recompress(std::span<const std::byte> batch, compression codec,
                                          std::size_t max_record_bytes) {
  // The records do not change, only their encoding: offset and timestamp deltas, the header's fields and its
  // max timestamp stay as the producer wrote them. So the header is copied, the records section (inflated
  // first if it was compressed) is compressed once, and codec bits, length and CRC are set around it.
  const batch_header_view header(batch);
  std::span<const std::byte> records = batch.subspan(batch_header_size);
  std::vector<std::byte> inflated;
  if (header.codec() != compression::none) {
    FERRY_TRY(decompress_all(header.codec(), records, max_record_bytes, inflated));
    records = inflated;
  }
  std::vector<std::byte> out(batch.begin(), batch.begin() + batch_header_size);
  FERRY_TRY(compress(codec, records, out));
  set_records_codec(out, codec);
  return out;
}

result<std::vector<std::byte>> retain_records(std::span<const std::byte> original, std::span<const std::byte> kept,
                                              std::int32_t count, std::int64_t max_timestamp) {
  const batch_header_view header(original);
  std::vector<std::byte> out(original.begin(), original.begin() + batch_header_size);
  auto* raw = reinterpret_cast<unsigned char*>(out.data());
  boost::endian::store_big_s32(raw + 57, count);  // records count
  if (count > 0 && header.ts_type() == timestamp_type::create_time)
    boost::endian::store_big_s64(raw + 35, max_timestamp);
  const compression codec = count > 0 ? header.codec() : compression::none;
  FERRY_TRY(compress(codec, kept, out));
  set_records_codec(out, codec);
  return out;
}

}  // namespace ferry::model
