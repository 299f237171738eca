#pragma once

// The consumer's embedded protocol: what Kafka's consumers put in the protocol metadata of JoinGroup
// (a subscription, one per assignor the member supports) and what the leader hands each member through
// SyncGroup (an assignment), for groups of protocol type "consumer". The broker stores both as opaque bytes
// (group/offsets_records.h); it reads them to describe a group's subscriptions and, later, to assign
// partitions itself.
//
// Each is an int16 version and the message of that version, in the classic encoding (big-endian integers; a
// string is an int16 length and its bytes, bytes an int32 length, an array an int32 count; -1 is null):
//
//   subscription                                      versions
//     topics             array of string              0+
//     user_data          nullable bytes               0+   the assignor's own data
//     owned_partitions   array of                     1+   what the member owns now (cooperative rebalancing,
//       topic            string                            KIP-429)
//       partitions       array of int32
//     generation_id      int32                        2+   the generation owned_partitions belong to; -1: none
//                                                          (KIP-792)
//     rack_id            nullable string              3+   the member's client.rack (KIP-881)
//
//   assignment
//     assigned_partitions array of                    0+
//       topic            string
//       partitions       array of int32
//     user_data          nullable bytes               0+
//
// Newer versions may only append fields (ConsumerProtocol's promise): a version above 3 is read as version 3
// and whatever follows the known fields is ignored, as Kafka's ConsumerProtocol does. Versions 0-3 must end
// with their last field. A negative version is refused. Decoders never throw, never read past their input, and
// allocate no more than the input's length justifies (codec_errc).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "bytes/codec_errc.h"
#include "model/ids.h"

namespace ferry::group {

// The newest versions Kafka defines.
inline constexpr std::int16_t max_subscription_version = 3;
inline constexpr std::int16_t max_assignment_version = 3;

struct topic_partitions {
  std::string topic;
  std::vector<partition_id> partitions;

  bool operator==(const topic_partitions&) const = default;
};

struct subscription {
  // The version read, or to write. Fields the version lacks keep their defaults when read and are left out
  // when written.
  std::int16_t version = max_subscription_version;
  std::vector<std::string> topics;
  std::optional<std::vector<std::byte>> user_data;
  std::vector<topic_partitions> owned_partitions;
  std::int32_t generation_id = -1;
  std::optional<std::string> rack_id;

  bool operator==(const subscription&) const = default;
};

struct assignment {
  std::int16_t version = max_assignment_version;
  std::vector<topic_partitions> assigned_partitions;
  std::optional<std::vector<std::byte>> user_data;

  bool operator==(const assignment&) const = default;
};

// In s.version (a version above 3 is written with its number and version 3's fields). Empty, which no
// subscription is, for a negative version or a string over 32767 bytes.
[[nodiscard]] std::vector<std::byte> encode_subscription(const subscription& s);
[[nodiscard]] result<subscription> decode_subscription(std::span<const std::byte> bytes);

// As encode_subscription, for a.version.
[[nodiscard]] std::vector<std::byte> encode_assignment(const assignment& a);
[[nodiscard]] result<assignment> decode_assignment(std::span<const std::byte> bytes);

}  // namespace ferry::group
