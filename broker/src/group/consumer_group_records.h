#pragma once

// The __consumer_offsets records of consumer groups of the consumer protocol (KIP-848), as Kafka 4's group
// coordinator writes them, so that a partition Kafka wrote loads into Ferry and Kafka's tools read Ferry's.
//
// Key: int16 record type, then the key fields in the classic encoding (int16-length strings):
//
//   3  group metadata           group
//   5  member metadata          group, member_id
//   6  target assignment epoch  group
//   7  target assignment        group, member_id
//   8  current assignment       group, member_id
//
// Value: int16 version 0, then the fields in the flexible encoding (compact strings and arrays, a tagged-field
// section after every struct). A null value is a tombstone. Tagged fields are skipped when read and none is
// written (Kafka 4.1+'s metadata hash, 4.3+'s assignment timestamp and per-partition assignment epochs).
//
//   3  epoch int32                                                        the group epoch
//   5  instance_id nullable string, rack_id nullable string, client_id string, client_host string,
//      subscribed_topic_names [string], subscribed_topic_regex nullable string, rebalance_timeout_ms int32,
//      server_assignor nullable string
//   6  assignment_epoch int32
//   7  [topic_id uuid, partitions [int32]]                                the member's target
//   8  member_epoch int32, previous_member_epoch int32, state int8 (0 stable, 1 unrevoked partitions,
//      2 unreleased partitions), assigned [topic_id, partitions], pending_revocation [topic_id, partitions]
//
// Type 4 (subscription metadata, Kafka 4.0) is read as unknown_key and not written: Ferry recomputes it from
// the cluster's topics on the first heartbeat after loading, as Kafka 4.1 does with its hash. Type 16 (resolved
// regular expressions) is read as unknown and not written either: Ferry resolves a member's subscribed_topic_regex
// (type 5) against the cluster's topics at every heartbeat.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/result.h"

namespace ferry::group {

using topic_uuid = std::array<std::uint8_t, 16>;
// Partitions per topic id, ordered, so that every encoding and every assignor pass is deterministic.
using topic_id_partitions = std::map<topic_uuid, std::set<std::int32_t>>;

enum class consumer_record_type : std::int16_t {
  group_metadata = 3,
  member_metadata = 5,
  target_assignment_metadata = 6,
  target_assignment_member = 7,
  current_assignment = 8,
};
[[nodiscard]] bool is_consumer_record_type(std::int16_t type);

struct consumer_group_key {
  consumer_record_type type = consumer_record_type::group_metadata;
  std::string group;
  std::string member_id;  // types 5, 7 and 8 only

  bool operator==(const consumer_group_key&) const = default;
};

struct consumer_group_epoch_value {
  std::int32_t epoch = 0;
  bool operator==(const consumer_group_epoch_value&) const = default;
};
struct consumer_member_value {
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  std::vector<std::string> subscribed_topic_names;
  std::optional<std::string> subscribed_topic_regex;
  std::int32_t rebalance_timeout_ms = -1;
  std::optional<std::string> server_assignor;
  bool operator==(const consumer_member_value&) const = default;
};
struct target_assignment_epoch_value {
  std::int32_t assignment_epoch = 0;
  bool operator==(const target_assignment_epoch_value&) const = default;
};
struct target_assignment_value {
  topic_id_partitions partitions;
  bool operator==(const target_assignment_value&) const = default;
};
struct current_assignment_value {
  std::int32_t member_epoch = 0;
  std::int32_t previous_member_epoch = 0;
  std::int8_t state = 0;
  topic_id_partitions assigned;
  topic_id_partitions pending_revocation;
  bool operator==(const current_assignment_value&) const = default;
};
using consumer_group_value =
    std::variant<consumer_group_epoch_value, consumer_member_value, target_assignment_epoch_value,
                 target_assignment_value, current_assignment_value>;

struct consumer_group_record {
  consumer_group_key key;
  std::optional<consumer_group_value> value;  // nullopt: a tombstone
  bool operator==(const consumer_group_record&) const = default;
};

// Empty when a string does not fit its int16 length.
[[nodiscard]] std::vector<std::byte> encode_key(const consumer_group_key& key);
// The value's type must be the key's (consumer_group_value's alternatives are in record type order).
[[nodiscard]] std::vector<std::byte> encode_value(const consumer_group_value& value);

// The key fields after the record type (read by decode_key), and a value of the key's type.
[[nodiscard]] result<consumer_group_key> decode_consumer_group_key(consumer_record_type type,
                                                                   std::span<const std::byte> fields);
[[nodiscard]] result<consumer_group_value> decode_consumer_group_value(consumer_record_type type,
                                                                       std::span<const std::byte> value);

}  // namespace ferry::group
