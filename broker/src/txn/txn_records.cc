#include "txn/txn_records.h"

#include <algorithm>
#include <map>

#include "bytes/data_wire.h"

namespace ferry::txn {
namespace wire = bytes::data_wire;
namespace {

using wire::encoding;

constexpr std::uint32_t previous_pid_tag = 0;
constexpr std::uint32_t next_pid_tag = 1;
constexpr std::uint32_t client_txn_version_tag = 2;
constexpr std::uint32_t next_epoch_tag = 3;

// The fewest bytes a partitions entry takes: an empty topic name and an empty id array, classic or compact.
constexpr std::size_t min_topic_bytes = 2;

template <typename T>
std::vector<std::byte> int_bytes(T v) {
  wire::writer out;
  if constexpr (sizeof(T) == 8)
    out.int64(v);
  else
    out.int16(v);
  return std::move(out).take();
}

template <typename T>
T int_from(std::span<const std::byte> data, wire::reader& outer) {
  wire::reader in(data);
  T v{};
  if constexpr (sizeof(T) == 8)
    v = in.int64();
  else
    v = in.int16();
  if (!in.finish()) outer.fail(bytes::codec_errc::invalid_length);
  return v;
}

}  // namespace

std::string_view state_name(txn_state state) {
  switch (state) {
    case txn_state::empty:
      return "Empty";
    case txn_state::ongoing:
      return "Ongoing";
    case txn_state::prepare_commit:
      return "PrepareCommit";
    case txn_state::prepare_abort:
      return "PrepareAbort";
    case txn_state::complete_commit:
      return "CompleteCommit";
    case txn_state::complete_abort:
      return "CompleteAbort";
    case txn_state::dead:
      return "Dead";
    case txn_state::prepare_epoch_fence:
      return "PrepareEpochFence";
  }
  return "Unknown";
}

std::vector<std::byte> encode_txn_key(std::string_view transactional_id) {
  wire::writer out;
  out.int16(txn_key_version);
  out.string(transactional_id, encoding::classic);
  return std::move(out).take();
}

result<std::string> decode_txn_key(std::span<const std::byte> key) {
  wire::reader in(key);
  if (in.int16() != txn_key_version && in.ok()) return bytes::codec_errc::unsupported_version;
  auto id = in.string(encoding::classic);
  FERRY_TRY(in.finish());
  return id;
}

std::vector<std::byte> encode_txn_value(const txn_log_value& value) {
  const bool tagged = value.previous_pid != no_producer_id || value.next_pid != no_producer_id ||
                      value.client_txn_version != 0 || value.next_epoch != producer_epoch{-1};
  const encoding e = tagged ? encoding::flexible : encoding::classic;
  wire::writer out;
  out.int16(tagged ? 1 : 0);
  out.int64(value.pid.value());
  out.int16(value.epoch.value());
  out.int32(value.timeout_ms);
  out.int8(static_cast<std::int8_t>(value.state));
  std::map<std::string_view, std::vector<std::int32_t>> by_topic;
  for (const auto& tp : value.partitions) by_topic[tp.topic].push_back(tp.partition.value());
  if (by_topic.empty() && value.state == txn_state::empty) {
    out.null_array(e);
  } else {
    out.array_length(by_topic.size(), e);
    for (const auto& [topic, ids] : by_topic) {
      out.string(topic, e);
      out.array_length(ids.size(), e);
      for (const auto id : ids) out.int32(id);
      if (tagged) out.empty_tagged_fields();
    }
  }
  out.int64(value.last_update_ms);
  out.int64(value.start_ms);
  if (tagged) {
    std::size_t count = 0;
    count += value.previous_pid != no_producer_id ? 1 : 0;
    count += value.next_pid != no_producer_id ? 1 : 0;
    count += value.client_txn_version != 0 ? 1 : 0;
    count += value.next_epoch != producer_epoch{-1} ? 1 : 0;
    out.tagged_field_count(count);
    if (value.previous_pid != no_producer_id)
      out.tagged_field(previous_pid_tag, int_bytes<std::int64_t>(value.previous_pid.value()));
    if (value.next_pid != no_producer_id)
      out.tagged_field(next_pid_tag, int_bytes<std::int64_t>(value.next_pid.value()));
    if (value.client_txn_version != 0)
      out.tagged_field(client_txn_version_tag, int_bytes<std::int16_t>(value.client_txn_version));
    if (value.next_epoch != producer_epoch{-1})
      out.tagged_field(next_epoch_tag, int_bytes<std::int16_t>(value.next_epoch.value()));
  }
  return std::move(out).take();
}

result<txn_log_value> decode_txn_value(std::span<const std::byte> bytes) {
  wire::reader in(bytes);
  const auto version = in.int16();
  if (in.ok() && (version < 0 || version > 1)) return bytes::codec_errc::unsupported_version;
  const encoding e = version >= 1 ? encoding::flexible : encoding::classic;
  txn_log_value value;
  value.pid = producer_id{in.int64()};
  value.epoch = producer_epoch{in.int16()};
  value.timeout_ms = in.int32();
  const auto state = in.int8();
  if (in.ok() && (state < 0 || state > max_txn_state)) in.fail(bytes::codec_errc::invalid_length);
  value.state = static_cast<txn_state>(state);
  // A null array (Kafka writes one while Empty) reads as no partitions.
  const auto topics = in.nullable_array_length(e, min_topic_bytes);
  for (std::size_t t = 0; t < topics && in.ok(); ++t) {
    auto topic = in.string(e);
    const auto ids = in.array_length(e, sizeof(std::int32_t));
    for (std::size_t i = 0; i < ids && in.ok(); ++i) value.partitions.push_back({topic, partition_id{in.int32()}});
    if (e == encoding::flexible) in.skip_tagged_fields();
  }
  value.last_update_ms = in.int64();
  value.start_ms = in.int64();
  if (e == encoding::flexible) {
    in.tagged_fields([&](std::uint32_t tag, std::span<const std::byte> data) {
      switch (tag) {
        case previous_pid_tag:
          value.previous_pid = producer_id{int_from<std::int64_t>(data, in)};
          break;
        case next_pid_tag:
          value.next_pid = producer_id{int_from<std::int64_t>(data, in)};
          break;
        case client_txn_version_tag:
          value.client_txn_version = int_from<std::int16_t>(data, in);
          break;
        case next_epoch_tag:
          value.next_epoch = producer_epoch{int_from<std::int16_t>(data, in)};
          break;
        default:
          break;  // a field of a newer Kafka: nothing Ferry keeps
      }
    });
  }
  FERRY_TRY(in.finish());
  std::sort(value.partitions.begin(), value.partitions.end());
  return value;
}

}  // namespace ferry::txn
