#include "model/control_record.h"

#include <array>

#include "bytes/big_endian.h"
#include "model/batch_builder.h"
#include "model/errc.h"
#include "model/record_batch.h"
#include "model/records.h"

namespace ferry::model {
namespace {

constexpr std::int16_t marker_version = 0;
constexpr std::size_t key_size = 4;    // version, type
constexpr std::size_t value_size = 6;  // version, coordinator epoch

using bytes::load_big;
using bytes::store_big;

}  // namespace

std::vector<std::byte> build_marker_batch(producer_id producer, producer_epoch epoch, txn_marker marker,
                                          std::int64_t timestamp_ms) {
  std::array<std::byte, key_size> key{};
  store_big<std::int16_t>(key, 0, marker_version);
  store_big<std::int16_t>(key, 2, static_cast<std::int16_t>(marker.type));
  std::array<std::byte, value_size> value{};
  store_big<std::int16_t>(value, 0, marker_version);
  store_big<std::int32_t>(value, 2, marker.coordinator_epoch);
  batch_builder builder({.producer = producer, .epoch = epoch, .transactional = true, .control = true});
  builder.add(timestamp_ms, std::span<const std::byte>(key), std::span<const std::byte>(value));
  // One record with no codec: finish() cannot fail.
  return std::move(builder.finish()).value();
}

result<txn_marker> read_marker(std::span<const std::byte> batch) {
  if (batch.size() < batch_header_size || !batch_header_view(batch).is_control() ||
      batch_header_view(batch).codec() != compression::none)
    return errc::malformed_record;
  std::optional<txn_marker> found;
  bool malformed = false;
  std::vector<std::byte> scratch;
  FERRY_TRY(for_each_stored_record(batch, batch.size(), scratch, [&](const record_view& r) {
    if (!r.key || r.key->size() < key_size || !r.value || r.value->size() < value_size ||
        load_big<std::int16_t>(*r.key, 0) < marker_version || load_big<std::int16_t>(*r.value, 0) < marker_version) {
      malformed = true;
      return false;
    }
    const auto type = load_big<std::int16_t>(*r.key, 2);
    if (type != static_cast<std::int16_t>(marker_type::abort) &&
        type != static_cast<std::int16_t>(marker_type::commit)) {
      malformed = true;
      return false;
    }
    found = txn_marker{static_cast<marker_type>(type), load_big<std::int32_t>(*r.value, 2)};
    return false;  // one record
  }));
  if (malformed || !found) return errc::malformed_record;
  return *found;
}

}  // namespace ferry::model
