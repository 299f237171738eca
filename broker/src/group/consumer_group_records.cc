#include "group/consumer_group_records.h"

#include "bytes/data_wire.h"

namespace ferry::group {
namespace wire = bytes::data_wire;
namespace {

using wire::encoding;
constexpr auto flex = encoding::flexible;
constexpr std::int16_t value_version = 0;
// The fewest bytes one topic entry takes: a 16-byte id, an empty partition array and an empty tag section.
constexpr std::size_t min_topic_bytes = 16 + 1 + 1;

bool has_member_id(consumer_record_type type) {
  return type == consumer_record_type::member_metadata || type == consumer_record_type::target_assignment_member ||
         type == consumer_record_type::current_assignment;
}

void write_partitions(wire::writer& out, const topic_id_partitions& topics) {
  out.array_length(topics.size(), flex);
  for (const auto& [id, partitions] : topics) {
    out.uuid(id);
    out.array_length(partitions.size(), flex);
    for (auto p : partitions) out.int32(p);
    out.empty_tagged_fields();
  }
}

topic_id_partitions read_partitions(wire::reader& in) {
  topic_id_partitions out;
  const std::size_t topics = in.array_length(flex, min_topic_bytes);
  for (std::size_t t = 0; t < topics && in.ok(); ++t) {
    auto& partitions = out[in.uuid()];
    const std::size_t n = in.array_length(flex, 4);
    for (std::size_t i = 0; i < n && in.ok(); ++i) partitions.insert(in.int32());
    in.skip_tagged_fields();
  }
  return out;
}

}  // namespace

bool is_consumer_record_type(std::int16_t type) { return type == 3 || (type >= 5 && type <= 8); }

std::vector<std::byte> encode_key(const consumer_group_key& key) {
  wire::writer out;
  out.int16(static_cast<std::int16_t>(key.type));
  out.string(key.group, encoding::classic);
  if (has_member_id(key.type)) out.string(key.member_id, encoding::classic);
  return std::move(out).take();
}

std::vector<std::byte> encode_value(const consumer_group_value& value) {
  wire::writer out;
  out.int16(value_version);
  if (const auto* v = std::get_if<consumer_group_epoch_value>(&value)) {
    out.int32(v->epoch);
  } else if (const auto* m = std::get_if<consumer_member_value>(&value)) {
    out.nullable_string(m->instance_id, flex);
    out.nullable_string(m->rack_id, flex);
    out.string(m->client_id, flex);
    out.string(m->client_host, flex);
    out.array_length(m->subscribed_topic_names.size(), flex);
    for (const auto& name : m->subscribed_topic_names) out.string(name, flex);
    out.nullable_string(m->subscribed_topic_regex, flex);
    out.int32(m->rebalance_timeout_ms);
    out.nullable_string(m->server_assignor, flex);
  } else if (const auto* e = std::get_if<target_assignment_epoch_value>(&value)) {
    out.int32(e->assignment_epoch);
  } else if (const auto* t = std::get_if<target_assignment_value>(&value)) {
    write_partitions(out, t->partitions);
  } else if (const auto* c = std::get_if<current_assignment_value>(&value)) {
    out.int32(c->member_epoch);
    out.int32(c->previous_member_epoch);
    out.int8(c->state);
    write_partitions(out, c->assigned);
    write_partitions(out, c->pending_revocation);
  }
  out.empty_tagged_fields();
  return std::move(out).take();
}

result<consumer_group_key> decode_consumer_group_key(consumer_record_type type, std::span<const std::byte> fields) {
  wire::reader in(fields);
  consumer_group_key key{type, in.string(encoding::classic), {}};
  if (has_member_id(type)) key.member_id = in.string(encoding::classic);
  FERRY_TRY(in.finish());
  return key;
}

result<consumer_group_value> decode_consumer_group_value(consumer_record_type type, std::span<const std::byte> value) {
  wire::reader in(value);
  const std::int16_t version = in.int16();
  if (!in.ok()) return in.error();
  if (version != value_version) return bytes::codec_errc::unsupported_version;
  consumer_group_value out;
  switch (type) {
    case consumer_record_type::group_metadata:
      out = consumer_group_epoch_value{in.int32()};
      break;
    case consumer_record_type::member_metadata: {
      consumer_member_value m;
      m.instance_id = in.nullable_string(flex);
      m.rack_id = in.nullable_string(flex);
      m.client_id = in.string(flex);
      m.client_host = in.string(flex);
      const std::size_t n = in.array_length(flex, 1);
      for (std::size_t i = 0; i < n && in.ok(); ++i) m.subscribed_topic_names.push_back(in.string(flex));
      m.subscribed_topic_regex = in.nullable_string(flex);
      m.rebalance_timeout_ms = in.int32();
      m.server_assignor = in.nullable_string(flex);
      out = std::move(m);
      break;
    }
    case consumer_record_type::target_assignment_metadata:
      out = target_assignment_epoch_value{in.int32()};
      break;
    case consumer_record_type::target_assignment_member:
      out = target_assignment_value{read_partitions(in)};
      break;
    case consumer_record_type::current_assignment: {
      current_assignment_value c;
      c.member_epoch = in.int32();
      c.previous_member_epoch = in.int32();
      c.state = in.int8();
      c.assigned = read_partitions(in);
      c.pending_revocation = read_partitions(in);
      out = std::move(c);
      break;
    }
  }
  in.skip_tagged_fields();
  FERRY_TRY(in.finish());
  return out;
}

}  // namespace ferry::group
