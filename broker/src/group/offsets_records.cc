#include "group/offsets_records.h"

#include "bytes/data_wire.h"

namespace ferry::group {
namespace wire = bytes::data_wire;
namespace {

using wire::encoding;

encoding encoding_of(std::int16_t version) { return version >= 4 ? encoding::flexible : encoding::classic; }

// The fewest bytes a member takes on the wire in any version: version 4's three empty strings, null instance
// id, two empty byte fields and empty tag section at one byte each, and its two int32 timeouts.
constexpr std::size_t min_member_bytes = 7 + 2 * 4;

void write_member(wire::writer& out, const member_metadata& m, std::int16_t version) {
  const encoding e = encoding_of(version);
  out.string(m.member_id, e);
  if (version >= 3) out.nullable_string(m.group_instance_id, e);
  out.string(m.client_id, e);
  out.string(m.client_host, e);
  if (version >= 1) out.int32(m.rebalance_timeout_ms);
  out.int32(m.session_timeout_ms);
  out.bytes(m.subscription, e);
  out.bytes(m.assignment, e);
  if (e == encoding::flexible) out.empty_tagged_fields();
}

member_metadata read_member(wire::reader& in, std::int16_t version) {
  const encoding e = encoding_of(version);
  member_metadata m;
  m.member_id = in.string(e);
  if (version >= 3) m.group_instance_id = in.nullable_string(e);
  m.client_id = in.string(e);
  m.client_host = in.string(e);
  if (version >= 1) m.rebalance_timeout_ms = in.int32();
  m.session_timeout_ms = in.int32();
  // Version 0 predates the rebalance timeout (KIP-62); Kafka's loader uses the session timeout for it.
  if (version == 0) m.rebalance_timeout_ms = m.session_timeout_ms;
  m.subscription = in.bytes(e);
  m.assignment = in.bytes(e);
  if (e == encoding::flexible) in.skip_tagged_fields();
  return m;
}

}  // namespace

std::vector<std::byte> encode_key(const offset_commit_key& key) {
  wire::writer out;
  out.int16(offset_commit_key_version);
  out.string(key.group, encoding::classic);
  out.string(key.topic, encoding::classic);
  out.int32(key.partition.value());
  return std::move(out).take();
}

std::vector<std::byte> encode_key(const group_metadata_key& key) {
  wire::writer out;
  out.int16(group_metadata_key_version);
  out.string(key.group, encoding::classic);
  return std::move(out).take();
}

std::vector<std::byte> encode_value(const offset_commit_value& value) {
  return encode_offset_commit_value(
      value, value.expire_timestamp_ms ? offset_commit_value_version_with_expiry : offset_commit_value_version);
}

std::vector<std::byte> encode_offset_commit_value(const offset_commit_value& value, std::int16_t version) {
  if (version < 0 || version > max_offset_commit_value_version) return {};
  const encoding e = encoding_of(version);
  wire::writer out;
  out.int16(version);
  out.int64(value.committed_offset.value());
  if (version >= 3) out.int32(value.committed_leader_epoch.value());
  out.string(value.metadata, e);
  out.int64(value.commit_timestamp_ms);
  if (version == 1) out.int64(value.expire_timestamp_ms.value_or(-1));
  if (e == encoding::flexible) out.empty_tagged_fields();
  return std::move(out).take();
}

std::vector<std::byte> encode_value(const group_metadata_value& value) {
  return encode_group_metadata_value(value, group_metadata_value_version);
}

std::vector<std::byte> encode_group_metadata_value(const group_metadata_value& value, std::int16_t version) {
  if (version < 0 || version > max_group_metadata_value_version) return {};
  const encoding e = encoding_of(version);
  wire::writer out;
  out.int16(version);
  out.string(value.protocol_type, e);
  out.int32(value.generation);
  out.nullable_string(value.protocol, e);
  out.nullable_string(value.leader, e);
  if (version >= 2) out.int64(value.current_state_timestamp_ms);
  out.array_length(value.members.size(), e);
  for (const auto& m : value.members) write_member(out, m, version);
  if (e == encoding::flexible) out.empty_tagged_fields();
  return std::move(out).take();
}

result<record_key> decode_key(std::span<const std::byte> key) {
  wire::reader in(key);
  const std::int16_t version = in.int16();
  if (!in.ok()) return in.error();
  record_key out;
  if (version == 0 || version == offset_commit_key_version) {
    offset_commit_key k;
    k.group = in.string(encoding::classic);
    k.topic = in.string(encoding::classic);
    k.partition = partition_id{in.int32()};
    out = std::move(k);
  } else if (version == group_metadata_key_version) {
    out = group_metadata_key{in.string(encoding::classic)};
  } else if (is_consumer_record_type(version)) {
    FERRY_TRY(auto k,
              decode_consumer_group_key(static_cast<consumer_record_type>(version), key.subspan(sizeof(version))));
    return record_key{std::move(k)};
  } else {
    // Kafka's loaders skip a record type they do not know without reading further; so does Ferry's.
    return record_key{unknown_key{version}};
  }
  FERRY_TRY(in.finish());
  return out;
}

result<offset_commit_value> decode_offset_commit_value(std::span<const std::byte> value) {
  wire::reader in(value);
  const std::int16_t version = in.int16();
  if (!in.ok()) return in.error();
  if (version < 0 || version > max_offset_commit_value_version) return bytes::codec_errc::unsupported_version;
  const encoding e = encoding_of(version);
  offset_commit_value out;
  out.committed_offset = offset{in.int64()};
  if (version >= 3) out.committed_leader_epoch = leader_epoch{in.int32()};
  out.metadata = in.string(e);
  out.commit_timestamp_ms = in.int64();
  if (version == 1) {
    const std::int64_t expire = in.int64();
    if (expire != -1) out.expire_timestamp_ms = expire;
  }
  if (e == encoding::flexible) in.skip_tagged_fields();
  FERRY_TRY(in.finish());
  return out;
}

result<group_metadata_value> decode_group_metadata_value(std::span<const std::byte> value) {
  wire::reader in(value);
  const std::int16_t version = in.int16();
  if (!in.ok()) return in.error();
  if (version < 0 || version > max_group_metadata_value_version) return bytes::codec_errc::unsupported_version;
  const encoding e = encoding_of(version);
  group_metadata_value out;
  out.protocol_type = in.string(e);
  out.generation = in.int32();
  out.protocol = in.nullable_string(e);
  out.leader = in.nullable_string(e);
  if (version >= 2) out.current_state_timestamp_ms = in.int64();
  const std::size_t members = in.array_length(e, min_member_bytes);
  out.members.reserve(members);
  for (std::size_t i = 0; i < members && in.ok(); ++i) out.members.push_back(read_member(in, version));
  if (e == encoding::flexible) in.skip_tagged_fields();
  FERRY_TRY(in.finish());
  return out;
}

result<offsets_record> decode_record(std::span<const std::byte> key, std::optional<std::span<const std::byte>> value) {
  FERRY_TRY(auto decoded_key, decode_key(key));
  if (auto* k = std::get_if<offset_commit_key>(&decoded_key)) {
    offset_commit_record record{std::move(*k), std::nullopt};
    if (value) {
      FERRY_TRY(auto v, decode_offset_commit_value(*value));
      record.value = std::move(v);
    }
    return offsets_record{std::move(record)};
  }
  if (auto* k = std::get_if<group_metadata_key>(&decoded_key)) {
    group_metadata_record record{std::move(*k), std::nullopt};
    if (value) {
      FERRY_TRY(auto v, decode_group_metadata_value(*value));
      record.value = std::move(v);
    }
    return offsets_record{std::move(record)};
  }
  if (auto* k = std::get_if<consumer_group_key>(&decoded_key)) {
    consumer_group_record record{std::move(*k), std::nullopt};
    if (value) {
      FERRY_TRY(auto v, decode_consumer_group_value(record.key.type, *value));
      record.value = std::move(v);
    }
    return offsets_record{std::move(record)};
  }
  return offsets_record{std::get<unknown_key>(decoded_key)};
}

}  // namespace ferry::group
