// Feeds arbitrary bytes to the decoders of the znodes Ferry reads from ZooKeeper (coord/layout.h), which any
// client of the ensemble can write. The first byte picks the decoder, the rest is the znode's data:
//
//   t /brokers/topics/<t>      s .../partitions/<p>/state   b /brokers/ids/<id>      c /config/topics/<t>
//   n /config/changes/...      C /controller                e /controller_epoch      i /cluster/id
//   p /latest_producer_id_block  L /ferry/partition_state_changes/...  u a topic or cluster id (uuid::parse)
//   N a znode name: topic name check, config_change_ and state_change_ sequences, and an endpoint
//     ("PLAINTEXT://host:9092")
//   A /kafka-acl/<Type>/<name> (coord/acl_layout.h)   a /kafka-acl-changes/...   x /kafka-acl-extended-changes/...
//
// Whatever decodes must encode to data that decodes to the same value (for a broker registration, only that
// it decodes: the encoder writes the version-5 shape whatever shape was read), and a topic's assignment goes
// through assignment_problem as the metadata table does before it uses one.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "coord/acl_layout.h"
#include "coord/layout.h"
#include "coord/metadata_table.h"
#include "coord/uuid.h"

namespace ferry::coord {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// decode(encode(decode(data))) == decode(data) when data decodes.
template <typename Decode, typename Encode>
void round_trip(std::string_view data, Decode decode, Encode encode) {
  const auto decoded = decode(data);
  if (!decoded) return;
  const auto again = decode(encode(decoded.value()));
  check(again && again.value() == decoded.value());
}

void run(char selector, std::string_view data) {
  using namespace layout;
  switch (selector) {
    case 't': {
      round_trip(data, decode_topic, encode_topic);
      if (const auto topic = decode_topic(data)) (void)assignment_problem(topic.value());
      break;
    }
    case 's':
      round_trip(data, decode_partition_state, encode_partition_state);
      break;
    case 'b': {
      const auto broker = decode_broker(data);
      if (broker) check(decode_broker(encode_broker(broker.value())).has_value());
      break;
    }
    case 'c':
      round_trip(data, decode_entity_config, encode_entity_config);
      break;
    case 'n': {
      // Version 1 names the entity type and name apart, so a type holding '/', or an empty type or name, cannot
      // be written as version 2's "<type>/<name>"; Ferry only ever writes "topics/<topic>".
      const auto change = decode_config_change(data);
      if (change && !change.value().entity_type.empty() && !change.value().entity_name.empty() &&
          change.value().entity_type.find('/') == std::string::npos)
        check(decode_config_change(encode_config_change(change.value())) == change);
      break;
    }
    case 'C':
      round_trip(data, decode_controller, encode_controller);
      break;
    case 'e':
      round_trip(data, decode_controller_epoch, encode_controller_epoch);
      break;
    case 'i':
      round_trip(data, decode_cluster_id, [](const std::string& id) { return encode_cluster_id(id); });
      break;
    case 'p':
      round_trip(data, decode_producer_id_block, encode_producer_id_block);
      break;
    case 'L':
      round_trip(data, decode_partition_state_changes, encode_partition_state_changes);
      break;
    case 'u': {
      const auto id = uuid::parse(data);
      if (id) check(id.value().to_string() == data);
      break;
    }
    case 'N': {
      (void)is_valid_topic_name(data);
      (void)config_change_sequence(data);
      (void)partition_state_change_sequence(data);
      const auto e = decode_endpoint(data);
      if (e) check(decode_endpoint(encode_endpoint(e.value())).has_value());
      break;
    }
    case 'A':
      round_trip(data, decode_acls, encode_acls);
      break;
    case 'a':
    case 'x': {
      const bool extended = selector == 'x';
      const auto change = decode_acl_change(data, extended);
      // A literal pattern is announced in the literal form, wherever it was read.
      if (change && (extended == (change.value().pattern == authz::pattern_type::prefixed)))
        check(decode_acl_change(encode_acl_change(change.value()), extended) == change);
      break;
    }
    default:
      break;
  }
}

}  // namespace
}  // namespace ferry::coord

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ferry::coord::run(static_cast<char>(data[0]), {reinterpret_cast<const char*>(data) + 1, size - 1});
  return 0;
}
