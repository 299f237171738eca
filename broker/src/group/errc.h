#pragma once

#include <system_error>

namespace ferry::group {

// What the group coordinator refuses, each with the Kafka error it becomes (server/error_mapping.cc).
enum class errc {
  not_coordinator = 1,          // NOT_COORDINATOR: this broker does not lead the group's offsets partition
  coordinator_loading,          // COORDINATOR_LOAD_IN_PROGRESS: the partition's groups are being read back
  coordinator_not_available,    // COORDINATOR_NOT_AVAILABLE: the group is going away, or no coordinator yet
  unknown_member_id,            // UNKNOWN_MEMBER_ID
  illegal_generation,           // ILLEGAL_GENERATION
  inconsistent_group_protocol,  // INCONSISTENT_GROUP_PROTOCOL: no protocol every member supports
  invalid_session_timeout,      // INVALID_SESSION_TIMEOUT: outside group.min/max.session.timeout.ms
  rebalance_in_progress,        // REBALANCE_IN_PROGRESS
  member_id_required,           // MEMBER_ID_REQUIRED: rejoin with the member id given (KIP-394)
  fenced_instance_id,           // FENCED_INSTANCE_ID: another member took this group.instance.id (KIP-345)
  group_max_size_reached,       // GROUP_MAX_SIZE_REACHED: group.max.size
  group_id_not_found,           // GROUP_ID_NOT_FOUND
  non_empty_group,              // NON_EMPTY_GROUP: deleting a group that has members
  invalid_group_id,             // INVALID_GROUP_ID: an empty group id
  offset_metadata_too_large,    // OFFSET_METADATA_TOO_LARGE: offset.metadata.max.bytes
  group_subscribed_to_topic,    // GROUP_SUBSCRIBED_TO_TOPIC: OffsetDelete of a topic the group consumes
  field_too_long,               // INVALID_REQUEST: a string __consumer_offsets cannot store (over 32767 bytes)
  invalid_request,              // INVALID_REQUEST: a ConsumerGroupHeartbeat that breaks the protocol's rules
  fenced_member_epoch,          // FENCED_MEMBER_EPOCH: the member's epoch is not the coordinator's (KIP-848)
  unreleased_instance_id,       // UNRELEASED_INSTANCE_ID: a static member joins while its instance id is in use
  unsupported_assignor,         // UNSUPPORTED_ASSIGNOR: not one of group.consumer.assignors
  stale_member_epoch,           // STALE_MEMBER_EPOCH: a commit or fetch with an old member epoch
  invalid_regular_expression,   // INVALID_REGULAR_EXPRESSION: a SubscribedTopicRegex RE2 cannot compile
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::group

template <>
struct std::is_error_code_enum<ferry::group::errc> : std::true_type {};
