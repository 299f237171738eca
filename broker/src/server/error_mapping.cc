#include "server/error_mapping.h"

#include "base/log.h"
#include "coord/errc.h"
#include "group/errc.h"
#include "model/errc.h"
#include "replication/errc.h"
#include "storage/errc.h"
#include "txn/errc.h"

namespace ferry::server {

using protocol::error_code;

error_code to_kafka_error(const std::error_code& error) {
  if (!error) return error_code::none;
  const auto& category = error.category();
  if (category == model::error_category()) {
    switch (static_cast<model::errc>(error.value())) {
      case model::errc::batch_too_large:
      case model::errc::records_too_large:
        return error_code::message_too_large;
      case model::errc::unsupported_magic:
        return error_code::unsupported_for_message_format;
      case model::errc::unsupported_compression:
        return error_code::unsupported_compression_type;
      case model::errc::crc_mismatch:
      case model::errc::batch_too_short:
      case model::errc::offset_overflow:
        return error_code::corrupt_message;
      case model::errc::invalid_record_count:
      case model::errc::malformed_record:
      case model::errc::record_count_mismatch:
      case model::errc::record_offsets_not_sequential:
      case model::errc::corrupt_compressed_records:
      case model::errc::control_batch_from_client:
      case model::errc::invalid_producer_fields:
      case model::errc::nonzero_base_offset:
        return error_code::invalid_record;
    }
  }
  if (category == storage::error_category()) {
    switch (static_cast<storage::errc>(error.value())) {
      case storage::errc::offset_out_of_range:
        return error_code::offset_out_of_range;
      case storage::errc::out_of_order_sequence:
        return error_code::out_of_order_sequence_number;
      case storage::errc::invalid_producer_epoch:
        return error_code::invalid_producer_epoch;
      case storage::errc::log_dir_in_use:
      case storage::errc::log_dir_offline:
      case storage::errc::corrupt_log:
        return error_code::kafka_storage_error;
      case storage::errc::topic_id_mismatch:
        return error_code::unknown_topic_id;
      case storage::errc::role_changed:
      case storage::errc::log_closed:
        return error_code::not_leader_or_follower;
      case storage::errc::missing_key:
        return error_code::corrupt_message;
      case storage::errc::out_of_order_offsets:
        return error_code::unknown_server_error;
      case storage::errc::invalid_txn_state:
        return error_code::invalid_txn_state;
      case storage::errc::coordinator_fenced:
        return error_code::transaction_coordinator_fenced;
    }
  }
  if (category == replication::error_category()) {
    switch (static_cast<replication::errc>(error.value())) {
      case replication::errc::not_leader:
      case replication::errc::not_follower:
        return error_code::not_leader_or_follower;
      case replication::errc::unknown_partition:
        return error_code::unknown_topic_or_partition;
    }
  }
  if (category == coord::error_category()) {
    switch (static_cast<coord::errc>(error.value())) {
      case coord::errc::no_node:
        return error_code::unknown_topic_or_partition;
      case coord::errc::node_exists:
        return error_code::topic_already_exists;
      case coord::errc::invalid_replication_factor:
        return error_code::invalid_replication_factor;
      case coord::errc::invalid_argument:
        return error_code::invalid_request;
      case coord::errc::timeout:
      case coord::errc::connection_loss:
      case coord::errc::session_expired:
      case coord::errc::closed:
      case coord::errc::bad_version:
        return error_code::request_timed_out;  // retriable: the state moved on
      case coord::errc::not_controller:
        return error_code::not_controller;
      case coord::errc::election_not_needed:
        return error_code::election_not_needed;
      case coord::errc::preferred_leader_not_available:
        return error_code::preferred_leader_not_available;
      case coord::errc::eligible_leaders_not_available:
        return error_code::eligible_leaders_not_available;
      case coord::errc::not_empty:
      case coord::errc::invalid_data:
      case coord::errc::not_allowed:
      case coord::errc::zookeeper_error:
      case coord::errc::internal_error:
        return error_code::unknown_server_error;
    }
  }
  if (category == group::error_category()) {
    switch (static_cast<group::errc>(error.value())) {
      case group::errc::not_coordinator:
        return error_code::not_coordinator;
      case group::errc::coordinator_loading:
        return error_code::coordinator_load_in_progress;
      case group::errc::coordinator_not_available:
        return error_code::coordinator_not_available;
      case group::errc::unknown_member_id:
        return error_code::unknown_member_id;
      case group::errc::illegal_generation:
        return error_code::illegal_generation;
      case group::errc::inconsistent_group_protocol:
        return error_code::inconsistent_group_protocol;
      case group::errc::invalid_session_timeout:
        return error_code::invalid_session_timeout;
      case group::errc::rebalance_in_progress:
        return error_code::rebalance_in_progress;
      case group::errc::member_id_required:
        return error_code::member_id_required;
      case group::errc::fenced_instance_id:
        return error_code::fenced_instance_id;
      case group::errc::group_max_size_reached:
        return error_code::group_max_size_reached;
      case group::errc::group_id_not_found:
        return error_code::group_id_not_found;
      case group::errc::non_empty_group:
        return error_code::non_empty_group;
      case group::errc::invalid_group_id:
        return error_code::invalid_group_id;
      case group::errc::offset_metadata_too_large:
        return error_code::offset_metadata_too_large;
      case group::errc::group_subscribed_to_topic:
        return error_code::group_subscribed_to_topic;
      case group::errc::field_too_long:
      case group::errc::invalid_request:
        return error_code::invalid_request;
      case group::errc::fenced_member_epoch:
        return error_code::fenced_member_epoch;
      case group::errc::unreleased_instance_id:
        return error_code::unreleased_instance_id;
      case group::errc::unsupported_assignor:
        return error_code::unsupported_assignor;
      case group::errc::stale_member_epoch:
        return error_code::stale_member_epoch;
      case group::errc::invalid_regular_expression:
        return error_code::invalid_regular_expression;
    }
  }
  if (category == txn::error_category()) {
    switch (static_cast<txn::errc>(error.value())) {
      case txn::errc::not_coordinator:
        return error_code::not_coordinator;
      case txn::errc::coordinator_loading:
        return error_code::coordinator_load_in_progress;
      case txn::errc::coordinator_not_available:
        return error_code::coordinator_not_available;
      case txn::errc::concurrent_transactions:
        return error_code::concurrent_transactions;
      case txn::errc::invalid_producer_id_mapping:
        return error_code::invalid_producer_id_mapping;
      case txn::errc::producer_fenced:
        return error_code::producer_fenced;
      case txn::errc::invalid_txn_state:
        return error_code::invalid_txn_state;
      case txn::errc::invalid_transaction_timeout:
        return error_code::invalid_transaction_timeout;
      case txn::errc::transactional_id_not_found:
        return error_code::transactional_id_not_found;
      case txn::errc::field_too_long:
        return error_code::invalid_request;
    }
  }
  if (category == std::system_category() || category == std::generic_category()) {
    // A failing disk: the client retries elsewhere or later, and nothing acknowledged is lost.
    return error_code::kafka_storage_error;
  }
  FERRY_LOG(warn, "server") << "no Kafka error code for " << category.name() << ":" << error.value() << " ("
                            << error.message() << ")";
  return error_code::unknown_server_error;
}

protocol::error_code to_kafka_txn_error(const std::error_code& error, bool producer_fenced_known) {
  const auto code = to_kafka_error(error);
  return code == protocol::error_code::producer_fenced && !producer_fenced_known
             ? protocol::error_code::invalid_producer_epoch
             : code;
}

}  // namespace ferry::server
