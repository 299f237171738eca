#include "group/consumer_protocol.h"

#include "bytes/data_wire.h"

namespace ferry::group {
namespace wire = bytes::data_wire;
namespace {

using wire::encoding;

constexpr encoding classic = encoding::classic;

// The fewest bytes on the wire of a string, an int32 and a topic with its partitions (an empty name, no
// partitions).
constexpr std::size_t min_string_bytes = 2;
constexpr std::size_t min_int32_bytes = 4;
constexpr std::size_t min_topic_partitions_bytes = 2 + 4;

void write_topic_partitions(wire::writer& out, const std::vector<topic_partitions>& list) {
  out.array_length(list.size(), classic);
  for (const auto& tp : list) {
    out.string(tp.topic, classic);
    out.array_length(tp.partitions.size(), classic);
    for (const partition_id p : tp.partitions) out.int32(p.value());
  }
}

std::vector<topic_partitions> read_topic_partitions(wire::reader& in) {
  std::vector<topic_partitions> list;
  const std::size_t topics = in.array_length(classic, min_topic_partitions_bytes);
  list.reserve(topics);
  for (std::size_t i = 0; i < topics && in.ok(); ++i) {
    topic_partitions& tp = list.emplace_back();
    tp.topic = in.string(classic);
    const std::size_t partitions = in.array_length(classic, min_int32_bytes);
    tp.partitions.reserve(partitions);
    for (std::size_t j = 0; j < partitions && in.ok(); ++j) tp.partitions.emplace_back(in.int32());
  }
  return list;
}

// The version whose fields a message of `version` is read with, or an error for a negative one.
result<std::int16_t> known_version(std::int16_t version, std::int16_t newest) {
  if (version < 0) return bytes::codec_errc::unsupported_version;
  return version > newest ? newest : version;
}

}  // namespace

std::vector<std::byte> encode_subscription(const subscription& s) {
  if (s.version < 0) return {};
  const std::int16_t fields = s.version > max_subscription_version ? max_subscription_version : s.version;
  wire::writer out;
  out.int16(s.version);
  out.array_length(s.topics.size(), classic);
  for (const auto& topic : s.topics) out.string(topic, classic);
  out.nullable_bytes(s.user_data, classic);
  if (fields >= 1) write_topic_partitions(out, s.owned_partitions);
  if (fields >= 2) out.int32(s.generation_id);
  if (fields >= 3) out.nullable_string(s.rack_id, classic);
  return std::move(out).take();
}

result<subscription> decode_subscription(std::span<const std::byte> bytes) {
  wire::reader in(bytes);
  subscription s;
  s.version = in.int16();
  if (!in.ok()) return in.error();
  FERRY_TRY(const std::int16_t fields, known_version(s.version, max_subscription_version));
  const std::size_t topics = in.array_length(classic, min_string_bytes);
  s.topics.reserve(topics);
  for (std::size_t i = 0; i < topics && in.ok(); ++i) s.topics.push_back(in.string(classic));
  s.user_data = in.nullable_bytes(classic);
  if (fields >= 1) s.owned_partitions = read_topic_partitions(in);
  if (fields >= 2) s.generation_id = in.int32();
  if (fields >= 3) s.rack_id = in.nullable_string(classic);
  FERRY_TRY(in.finish(/*allow_trailing=*/s.version > max_subscription_version));
  return s;
}

std::vector<std::byte> encode_assignment(const assignment& a) {
  if (a.version < 0) return {};
  wire::writer out;
  out.int16(a.version);
  write_topic_partitions(out, a.assigned_partitions);
  out.nullable_bytes(a.user_data, classic);
  return std::move(out).take();
}

result<assignment> decode_assignment(std::span<const std::byte> bytes) {
  wire::reader in(bytes);
  assignment a;
  a.version = in.int16();
  if (!in.ok()) return in.error();
  FERRY_TRY(known_version(a.version, max_assignment_version));
  a.assigned_partitions = read_topic_partitions(in);
  a.user_data = in.nullable_bytes(classic);
  FERRY_TRY(in.finish(/*allow_trailing=*/a.version > max_assignment_version));
  return a;
}

}  // namespace ferry::group
