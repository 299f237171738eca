#include "protocol/error_code.h"

namespace ferry::protocol {

std::string_view name(error_code e) {
  switch (e) {
    case error_code::unknown_server_error: return "UNKNOWN_SERVER_ERROR";
    case error_code::none: return "NONE";
    case error_code::offset_out_of_range: return "OFFSET_OUT_OF_RANGE";
    case error_code::corrupt_message: return "CORRUPT_MESSAGE";
    case error_code::unknown_topic_or_partition: return "UNKNOWN_TOPIC_OR_PARTITION";
    case error_code::invalid_fetch_size: return "INVALID_FETCH_SIZE";
    case error_code::leader_not_available: return "LEADER_NOT_AVAILABLE";
    case error_code::not_leader_or_follower: return "NOT_LEADER_OR_FOLLOWER";
    case error_code::request_timed_out: return "REQUEST_TIMED_OUT";
    case error_code::broker_not_available: return "BROKER_NOT_AVAILABLE";
    case error_code::replica_not_available: return "REPLICA_NOT_AVAILABLE";
    case error_code::message_too_large: return "MESSAGE_TOO_LARGE";
    case error_code::coordinator_not_available: return "COORDINATOR_NOT_AVAILABLE";
    case error_code::not_coordinator: return "NOT_COORDINATOR";
    case error_code::invalid_topic_exception: return "INVALID_TOPIC_EXCEPTION";
    case error_code::record_list_too_large: return "RECORD_LIST_TOO_LARGE";
    case error_code::not_enough_replicas: return "NOT_ENOUGH_REPLICAS";
    case error_code::not_enough_replicas_after_append: return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case error_code::invalid_required_acks: return "INVALID_REQUIRED_ACKS";
    case error_code::cluster_authorization_failed: return "CLUSTER_AUTHORIZATION_FAILED";
    case error_code::invalid_timestamp: return "INVALID_TIMESTAMP";
    case error_code::unsupported_version: return "UNSUPPORTED_VERSION";
    case error_code::topic_already_exists: return "TOPIC_ALREADY_EXISTS";
    case error_code::invalid_partitions: return "INVALID_PARTITIONS";
    case error_code::invalid_replication_factor: return "INVALID_REPLICATION_FACTOR";
    case error_code::invalid_replica_assignment: return "INVALID_REPLICA_ASSIGNMENT";
    case error_code::invalid_config: return "INVALID_CONFIG";
    case error_code::not_controller: return "NOT_CONTROLLER";
    case error_code::invalid_request: return "INVALID_REQUEST";
    case error_code::unsupported_for_message_format: return "UNSUPPORTED_FOR_MESSAGE_FORMAT";
    case error_code::policy_violation: return "POLICY_VIOLATION";
    case error_code::out_of_order_sequence_number: return "OUT_OF_ORDER_SEQUENCE_NUMBER";
    case error_code::duplicate_sequence_number: return "DUPLICATE_SEQUENCE_NUMBER";
    case error_code::invalid_producer_epoch: return "INVALID_PRODUCER_EPOCH";
    case error_code::invalid_txn_state: return "INVALID_TXN_STATE";
    case error_code::invalid_producer_id_mapping: return "INVALID_PRODUCER_ID_MAPPING";
    case error_code::invalid_transaction_timeout: return "INVALID_TRANSACTION_TIMEOUT";
    case error_code::kafka_storage_error: return "KAFKA_STORAGE_ERROR";
    case error_code::unknown_producer_id: return "UNKNOWN_PRODUCER_ID";
    case error_code::topic_deletion_disabled: return "TOPIC_DELETION_DISABLED";
    case error_code::fetch_session_id_not_found: return "FETCH_SESSION_ID_NOT_FOUND";
    case error_code::fenced_leader_epoch: return "FENCED_LEADER_EPOCH";
    case error_code::unknown_leader_epoch: return "UNKNOWN_LEADER_EPOCH";
    case error_code::unsupported_compression_type: return "UNSUPPORTED_COMPRESSION_TYPE";
    case error_code::invalid_record: return "INVALID_RECORD";
    case error_code::producer_fenced: return "PRODUCER_FENCED";
    case error_code::resource_not_found: return "RESOURCE_NOT_FOUND";
    case error_code::unknown_topic_id: return "UNKNOWN_TOPIC_ID";
  }
  return "UNKNOWN";
}

}  // namespace ferry::protocol
