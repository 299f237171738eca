#pragma once

#include <cstdint>
#include <string_view>

namespace ferry::protocol {

// Kafka's wire error codes that Ferry sends. Codes never change; see Kafka's Errors.java for the full list.
enum class error_code : std::int16_t {
  unknown_server_error = -1,
  none = 0,
  offset_out_of_range = 1,
  corrupt_message = 2,  // CRC or size check failed
  unknown_topic_or_partition = 3,
  invalid_fetch_size = 4,
  leader_not_available = 5,
  not_leader_or_follower = 6,
  request_timed_out = 7,
  broker_not_available = 8,
  replica_not_available = 9,
  message_too_large = 10,
  coordinator_not_available = 15,
  not_coordinator = 16,
  invalid_topic_exception = 17,
  record_list_too_large = 18,
  not_enough_replicas = 19,
  not_enough_replicas_after_append = 20,
  invalid_required_acks = 21,
  invalid_timestamp = 32,
  unsupported_version = 35,
  topic_already_exists = 36,
  invalid_partitions = 37,
  invalid_replication_factor = 38,
  invalid_replica_assignment = 39,
  invalid_config = 40,
  not_controller = 41,
  invalid_request = 42,
  unsupported_for_message_format = 43,
  policy_violation = 44,
  out_of_order_sequence_number = 45,
  duplicate_sequence_number = 46,
  invalid_producer_epoch = 47,
  invalid_txn_state = 48,
  invalid_producer_id_mapping = 49,
  invalid_transaction_timeout = 50,
  concurrent_transactions = 51,
  transaction_coordinator_fenced = 52,
  operation_not_attempted = 55,
  transactional_id_not_found = 105,
  cluster_authorization_failed = 31,
  kafka_storage_error = 56,
  unknown_producer_id = 59,
  preferred_leader_not_available = 80,
  eligible_leaders_not_available = 83,
  election_not_needed = 84,
  no_reassignment_in_progress = 85,
  topic_deletion_disabled = 73,
  fetch_session_id_not_found = 70,
  listener_not_found = 72,
  fenced_leader_epoch = 74,
  unknown_leader_epoch = 75,
  unsupported_compression_type = 76,
  invalid_record = 87,
  unstable_offset_commit = 88,
  producer_fenced = 90,
  resource_not_found = 91,
  unknown_topic_id = 100,
  coordinator_load_in_progress = 14,
  illegal_generation = 22,
  inconsistent_group_protocol = 23,
  invalid_group_id = 24,
  unknown_member_id = 25,
  invalid_session_timeout = 26,
  rebalance_in_progress = 27,
  invalid_commit_offset_size = 28,
  offset_metadata_too_large = 12,
  non_empty_group = 68,
  group_id_not_found = 69,
  member_id_required = 79,
  group_max_size_reached = 81,
  fenced_instance_id = 82,
  group_subscribed_to_topic = 86,
  fenced_member_epoch = 110,
  unreleased_instance_id = 111,
  unsupported_assignor = 112,
  stale_member_epoch = 113,
};

[[nodiscard]] constexpr std::int16_t code(error_code e) { return static_cast<std::int16_t>(e); }

// Kafka's name for the code, e.g. "UNKNOWN_TOPIC_OR_PARTITION"; for logs and error messages.
[[nodiscard]] std::string_view name(error_code e);

}  // namespace ferry::protocol
