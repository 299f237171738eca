#pragma once

// The records of the __consumer_offsets topic: committed offsets and classic group metadata, stored exactly as
// Kafka stores them (its group coordinator's OffsetCommitKey/Value and GroupMetadataKey/Value messages,
// kafka-group-coordinator 3.9 and 4.x), so that Kafka's tools (kafka-dump-log --offsets-decoder, the console
// consumer's offsets and group-metadata formatters) read Ferry's partitions, and a partition Kafka wrote loads
// into Ferry.
//
// Key and value are each an int16 version followed by the message of that version. The key's version says
// what the record is (Kafka 4 calls it the record type; the bytes are the same):
//
//   0, 1   offset commit key     group string, topic string, partition int32        Ferry writes 1
//   2      group metadata key    group string
//   3, 5-8 KIP-848 consumer groups: group/consumer_group_records.h
//   4, 16  KIP-848 subscription metadata and regular expressions, share groups (9-15), streams groups (17-23):
//          Ferry writes none of these and skips them, and any other number, when it loads (unknown_key).
//
// A null value is a tombstone: the group's committed offset for the partition, or the group, was deleted.
// Compaction keeps the last record of each key.
//
// Offset commit value; Ferry writes version 3, or version 1 when an expire timestamp is set (Kafka 3.x does
// the same; Kafka 4 writes version 4 instead of 3):
//
//   field             type    versions  notes
//   offset            int64   0+        the committed offset
//   leader_epoch      int32   3+        of the last consumed record; -1: none
//   metadata          string  0+        the client's, not null
//   commit_timestamp  int64   0+        ms since the epoch
//   expire_timestamp  int64   1 only    ms since the epoch; -1: none (offsets.retention.minutes decides)
//   tagged fields             4+        tag 0: the topic id (uuid); skipped
//
// Group metadata value (classic groups); Ferry writes version 3, as Kafka 3.x and 4.x do:
//
//   protocol_type            string           0+  "consumer", "connect", ...
//   generation               int32            0+
//   protocol                 nullable string  0+  the chosen assignor (null while empty)
//   leader                   nullable string  0+  the leader's member id
//   current_state_timestamp  int64            2+  ms since the epoch of the last state change; -1: none
//   members                  array            0+  each:
//     member_id              string           0+
//     group_instance_id      nullable string  3+  static membership (KIP-345)
//     client_id              string           0+
//     client_host            string           0+  "/10.0.0.1" as Kafka writes it
//     rebalance_timeout      int32            1+  ms; version 0 records have none and Kafka reads the session
//                                                 timeout in its place, as does this decoder
//     session_timeout        int32            0+  ms
//     subscription           bytes            0+  the member's protocol metadata for `protocol` (for
//                                                 "consumer": group/consumer_protocol.h)
//     assignment             bytes            0+  what the leader's SyncGroup gave the member
//     tagged fields                           4+
//   tagged fields                             4+
//
// Encodings: in versions 0-3, big-endian integers, a string is an int16 length and its UTF-8 bytes, bytes an
// int32 length, an array an int32 count, and -1 is null. Version 4 is flexible (KIP-482, KIP-915): compact
// strings, bytes and arrays (unsigned varint length + 1, 0 null) and a tagged-field section after the value
// and after each member. Strings are at most 32767 bytes in every version.
//
// Decoders never throw and never read past their input; they accept exactly the versions above, refuse bytes
// left after the last field, and allocate no more than the input's length justifies (codec_errc). Strings are
// kept as the bytes stored; Kafka would replace invalid UTF-8 when it reads them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/result.h"
#include "bytes/codec_errc.h"
#include "group/consumer_group_records.h"
#include "model/coordinator_log.h"
#include "model/ids.h"

namespace ferry::group {

using model::stored_record;

// Key versions (record types).
inline constexpr std::int16_t offset_commit_key_version = 1;
inline constexpr std::int16_t group_metadata_key_version = 2;
// Value versions Ferry writes, and the newest Kafka has written.
inline constexpr std::int16_t offset_commit_value_version = 3;
inline constexpr std::int16_t offset_commit_value_version_with_expiry = 1;
inline constexpr std::int16_t group_metadata_value_version = 3;
inline constexpr std::int16_t max_offset_commit_value_version = 4;
inline constexpr std::int16_t max_group_metadata_value_version = 4;

struct offset_commit_key {
  std::string group;
  std::string topic;
  partition_id partition{0};

  bool operator==(const offset_commit_key&) const = default;
};

struct group_metadata_key {
  std::string group;

  bool operator==(const group_metadata_key&) const = default;
};

// A record Ferry does not read (KIP-848, share and streams groups): its key's version, and nothing else is
// decoded.
struct unknown_key {
  std::int16_t version = 0;

  bool operator==(const unknown_key&) const = default;
};

using record_key = std::variant<offset_commit_key, group_metadata_key, consumer_group_key, unknown_key>;

struct offset_commit_value {
  offset committed_offset{0};
  leader_epoch committed_leader_epoch = no_leader_epoch;
  std::string metadata;
  std::int64_t commit_timestamp_ms = 0;
  // Set only for clients that give a retention time in OffsetCommit v2-v4 (or a commit timestamp in v1; v5
  // dropped both, KIP-211). Such a value is written as version 1, which has no leader epoch. A stored -1
  // decodes as none, as Kafka reads it.
  std::optional<std::int64_t> expire_timestamp_ms;

  bool operator==(const offset_commit_value&) const = default;
};

struct member_metadata {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  std::int32_t rebalance_timeout_ms = 0;
  std::int32_t session_timeout_ms = 0;
  std::vector<std::byte> subscription;
  std::vector<std::byte> assignment;

  bool operator==(const member_metadata&) const = default;
};

struct group_metadata_value {
  std::string protocol_type;
  std::int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  std::int64_t current_state_timestamp_ms = -1;
  std::vector<member_metadata> members;

  bool operator==(const group_metadata_value&) const = default;
};

// Encoders. Each returns an empty vector, which no record is, when a string is longer than 32767 bytes (the
// most Kafka's string fields hold): the coordinator refuses such names before it writes, as Kafka fails the
// request whose record it cannot serialize.
[[nodiscard]] std::vector<std::byte> encode_key(const offset_commit_key& key);
[[nodiscard]] std::vector<std::byte> encode_key(const group_metadata_key& key);
// In the version Ferry writes (offset_commit_value_version, or ..._with_expiry when expire_timestamp_ms is set).
[[nodiscard]] std::vector<std::byte> encode_value(const offset_commit_value& value);
// In `version` (0-4), leaving out the fields it does not have; empty for any other version.
[[nodiscard]] std::vector<std::byte> encode_offset_commit_value(const offset_commit_value& value, std::int16_t version);
// In group_metadata_value_version.
[[nodiscard]] std::vector<std::byte> encode_value(const group_metadata_value& value);
// In `version` (0-4), leaving out the fields it does not have; empty for any other version.
[[nodiscard]] std::vector<std::byte> encode_group_metadata_value(const group_metadata_value& value,
                                                                 std::int16_t version);

// Decoders of a present key or value. An unknown key version is not an error (unknown_key); a version
// outside 0-4 of a value is.
[[nodiscard]] result<record_key> decode_key(std::span<const std::byte> key);
[[nodiscard]] result<offset_commit_value> decode_offset_commit_value(std::span<const std::byte> value);
[[nodiscard]] result<group_metadata_value> decode_group_metadata_value(std::span<const std::byte> value);

// One record of the topic, as loading a partition reads it: the key, and its value decoded by the key's type;
// nullopt for a tombstone.
struct offset_commit_record {
  offset_commit_key key;
  std::optional<offset_commit_value> value;

  bool operator==(const offset_commit_record&) const = default;
};
struct group_metadata_record {
  group_metadata_key key;
  std::optional<group_metadata_value> value;

  bool operator==(const group_metadata_record&) const = default;
};
using offsets_record = std::variant<offset_commit_record, group_metadata_record, consumer_group_record, unknown_key>;

// `value` nullopt is a null value (a tombstone). The value of an unknown key is not looked at. Kafka never
// writes a null key here; pass an empty span for one, which is refused as truncated.
[[nodiscard]] result<offsets_record> decode_record(std::span<const std::byte> key,
                                                   std::optional<std::span<const std::byte>> value);

}  // namespace ferry::group
