// Feeds arbitrary bytes to the decoders of the records of __consumer_offsets (group/offsets_records.h), which
// any producer to that topic and any Kafka broker that wrote the partition before can have put there, and of
// the consumer's embedded protocol (group/consumer_protocol.h), which clients send in JoinGroup and
// SyncGroup. The first byte picks the decoder, the rest is its input:
//
//   k  a record key        o  an offset commit value     g  a group metadata value
//   s  a subscription      a  an assignment
//   r  a whole record: one byte n, a key of n bytes, then the value (nothing left: a null value, a tombstone)
//
// Whatever decodes must encode to bytes that decode to the same value, in the version Ferry writes; a value
// must also encode in every version Kafka has written and decode again (fields a version lacks are lost, so
// only that it decodes).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "group/consumer_protocol.h"
#include "group/offsets_records.h"

namespace ferry::group {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// decode(encode(decode(data))) == decode(data) when data decodes.
template <typename Decode, typename Encode>
void round_trip(std::span<const std::byte> data, Decode decode, Encode encode) {
  const auto decoded = decode(data);
  if (!decoded) return;
  const auto again = decode(encode(decoded.value()));
  check(again && again.value() == decoded.value());
}

template <typename Key>
void key_round_trip(const Key& k, const record_key& decoded) {
  // An unknown key is only its version: there is nothing to write back.
  if constexpr (!std::is_same_v<Key, unknown_key>) {
    const auto again = decode_key(encode_key(k));
    check(again && again.value() == decoded);
  }
}

// A record written back as Ferry writes it decodes to the same record.
template <typename Record>
void record_round_trip(const Record& r, const offsets_record& decoded) {
  if constexpr (!std::is_same_v<Record, unknown_key>) {
    std::optional<std::vector<std::byte>> value;
    if (r.value) value = encode_value(*r.value);
    std::optional<std::span<const std::byte>> view;
    if (value) view = *value;
    const auto again = decode_record(encode_key(r.key), view);
    check(again && again.value() == decoded);
  }
}

template <typename Decode, typename EncodeIn>
void every_version(std::span<const std::byte> data, Decode decode, EncodeIn encode_in, std::int16_t newest) {
  const auto decoded = decode(data);
  if (!decoded) return;
  for (std::int16_t v = 0; v <= newest; ++v) check(decode(encode_in(decoded.value(), v)).has_value());
}

void run(char selector, std::span<const std::byte> data) {
  switch (selector) {
    case 'k': {
      const auto key = decode_key(data);
      if (key) std::visit([&](const auto& k) { key_round_trip(k, key.value()); }, key.value());
      break;
    }
    case 'o':
      round_trip(data, decode_offset_commit_value, [](const offset_commit_value& v) { return encode_value(v); });
      every_version(data, decode_offset_commit_value, encode_offset_commit_value, max_offset_commit_value_version);
      break;
    case 'g':
      round_trip(data, decode_group_metadata_value, [](const group_metadata_value& v) { return encode_value(v); });
      every_version(data, decode_group_metadata_value, encode_group_metadata_value, max_group_metadata_value_version);
      break;
    case 's':
      round_trip(data, decode_subscription, encode_subscription);
      break;
    case 'a':
      round_trip(data, decode_assignment, encode_assignment);
      break;
    case 'r': {
      if (data.empty()) break;
      const auto key_size = std::min<std::size_t>(static_cast<std::uint8_t>(data[0]), data.size() - 1);
      const auto key = data.subspan(1, key_size);
      const auto rest = data.subspan(1 + key_size);
      const auto value = rest.empty() ? std::nullopt : std::optional<std::span<const std::byte>>(rest);
      const auto record = decode_record(key, value);
      if (!record) break;
      std::visit([&](const auto& r) { record_round_trip(r, record.value()); }, record.value());
      break;
    }
    default:
      break;
  }
}

}  // namespace
}  // namespace ferry::group

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ferry::group::run(static_cast<char>(data[0]), std::as_bytes(std::span(data + 1, size - 1)));
  return 0;
}
