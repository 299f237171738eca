#include "model/record_batch.h"

#include <cstring>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"

namespace ferry::model {
namespace {

template <typename T>
T load_be(std::span<const std::byte> bytes, std::size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return boost::endian::big_to_native(value);
}

template <typename T>
void store_be(std::span<std::byte> bytes, std::size_t at, T value) {
  value = boost::endian::native_to_big(value);
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

constexpr std::size_t crc_start = 21;

}  // namespace

offset batch_header_view::base_offset() const { return offset{load_be<std::int64_t>(bytes_, 0)}; }
std::int32_t batch_header_view::batch_length() const { return load_be<std::int32_t>(bytes_, 8); }
leader_epoch batch_header_view::partition_leader_epoch() const {
  return leader_epoch{load_be<std::int32_t>(bytes_, 12)};
}
std::int8_t batch_header_view::magic() const { return static_cast<std::int8_t>(bytes_[16]); }
std::uint32_t batch_header_view::crc() const { return load_be<std::uint32_t>(bytes_, 17); }
std::int16_t batch_header_view::attributes() const { return load_be<std::int16_t>(bytes_, 21); }
std::int32_t batch_header_view::last_offset_delta() const { return load_be<std::int32_t>(bytes_, 23); }
std::int64_t batch_header_view::base_timestamp() const { return load_be<std::int64_t>(bytes_, 27); }
std::int64_t batch_header_view::max_timestamp() const { return load_be<std::int64_t>(bytes_, 35); }
producer_id batch_header_view::producer() const { return producer_id{load_be<std::int64_t>(bytes_, 43)}; }
producer_epoch batch_header_view::epoch() const { return producer_epoch{load_be<std::int16_t>(bytes_, 51)}; }
std::int32_t batch_header_view::base_sequence() const { return load_be<std::int32_t>(bytes_, 53); }
std::int32_t batch_header_view::records_count() const { return load_be<std::int32_t>(bytes_, 57); }

bool batch_header_view::offsets_fit() const {
  const std::int32_t delta = last_offset_delta();
  return delta >= 0 && base_offset().value() <= INT64_MAX - 1 - delta;
}

std::int32_t batch_header_view::last_sequence() const {
  const std::int64_t last = static_cast<std::int64_t>(base_sequence()) + last_offset_delta();
  // Sequences wrap at INT32_MAX back to 0, as in Kafka.
  return static_cast<std::int32_t>(last > INT32_MAX ? last - INT32_MAX - 1 : last);
}

void set_base_offset(std::span<std::byte> batch, offset base) { store_be<std::int64_t>(batch, 0, base.value()); }

void set_partition_leader_epoch(std::span<std::byte> batch, leader_epoch epoch) {
  store_be<std::int32_t>(batch, 12, epoch.value());
}

void set_log_append_time(std::span<std::byte> batch, std::int64_t now_ms) {
  constexpr std::int16_t log_append_time_bit = 0x08;
  const auto attributes = load_be<std::int16_t>(batch, 21);
  store_be<std::int16_t>(batch, 21, static_cast<std::int16_t>(attributes | log_append_time_bit));
  store_be<std::int64_t>(batch, 35, now_ms);
  store_be<std::uint32_t>(batch, 17, bytes::crc32c(batch.subspan(crc_start)));
}

void set_max_timestamp(std::span<std::byte> batch, std::int64_t max_timestamp) {
  store_be<std::int64_t>(batch, 35, max_timestamp);
  store_be<std::uint32_t>(batch, 17, bytes::crc32c(batch.subspan(crc_start)));
}

void set_records_codec(std::span<std::byte> batch, compression codec) {
  constexpr std::int16_t codec_bits = 0x07;
  const auto attributes = load_be<std::int16_t>(batch, 21);
  store_be<std::int16_t>(batch, 21,
                         static_cast<std::int16_t>((attributes & ~codec_bits) | static_cast<std::int16_t>(codec)));
  store_be<std::int32_t>(batch, 8, static_cast<std::int32_t>(batch.size() - batch_log_overhead));
  store_be<std::uint32_t>(batch, 17, bytes::crc32c(batch.subspan(crc_start)));
}

std::size_t peek_batch_size(std::span<const std::byte> bytes) {
  if (bytes.size() < batch_log_overhead) return 0;
  const std::int32_t length = load_be<std::int32_t>(bytes, 8);
  if (length < static_cast<std::int32_t>(batch_header_size - batch_log_overhead)) return 0;
  return static_cast<std::size_t>(length) + batch_log_overhead;
}

std::error_code validate_batch(std::span<const std::byte> batch, const validation_rules& rules) {
  if (batch.size() < batch_header_size) return errc::batch_too_short;
  const batch_header_view header(batch);
  if (header.magic() != current_magic) return errc::unsupported_magic;
  if (header.batch_length() < 0 || header.total_size() != batch.size()) return errc::batch_too_short;
  if (batch.size() > rules.max_batch_bytes) return errc::batch_too_large;
  if (bytes::crc32c(batch.subspan(crc_start)) != header.crc()) return errc::crc_mismatch;
  // A stored batch may hold fewer records than offsets, and none at all: compaction keeps the offsets of the
  // records it removes (and the producer's last batch even when emptied), as Kafka's log cleaner does.
  const bool count_ok = rules.from_client
                            ? header.records_count() > 0 && header.last_offset_delta() == header.records_count() - 1
                            : header.records_count() >= 0 && header.last_offset_delta() >= 0 &&
                                  header.records_count() <= std::int64_t{header.last_offset_delta()} + 1;
  if (!count_ok) return errc::invalid_record_count;
  if (static_cast<std::uint8_t>(header.codec()) > static_cast<std::uint8_t>(compression::zstd))
    return errc::unsupported_compression;
  if (rules.from_client) {
    if (header.base_offset().value() != 0) return errc::nonzero_base_offset;
    if (header.is_control()) return errc::control_batch_from_client;
  }
  // Transaction markers carry their producer without a sequence (model/control_record.h).
  if (header.producer().value() >= 0 && header.base_sequence() < 0 && !header.is_control())
    return errc::invalid_producer_fields;
  // The base offset is outside the CRC, so a damaged stored batch can have any (found by record_batch_fuzz).
  if (!header.offsets_fit()) return errc::offset_overflow;
  return {};
}

}  // namespace ferry::model
