#pragma once

// One handler per Kafka API, each in its own file beside this one. A handler takes the decoded request and
// returns the response to encode; errors travel inside the response as Kafka error codes.
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "coord/uuid.h"
#include "protocol/api_table.h"
#include "replication/partition.h"
#include "server/request_context.h"

namespace ferry::server::handlers {

using boost::asio::awaitable;
namespace p = protocol;

// Leader epoch fencing (KIP-320), for Fetch, ListOffsets and OffsetForLeaderEpoch: a client that knows a newer epoch
// than ours talks to a stale leader; one with an older epoch has stale metadata. -1 asks for no check.
[[nodiscard]] inline std::optional<p::error_code> check_epoch(const replication::partition& partition,
                                                              leader_epoch requested) {
  if (requested.value() < 0) return std::nullopt;
  if (requested > partition.epoch()) return p::error_code::unknown_leader_epoch;
  if (requested < partition.epoch()) return p::error_code::fenced_leader_epoch;
  return std::nullopt;
}

// Topic ids as the wire carries them (16 bytes) and as the cluster view keys them.
[[nodiscard]] inline coord::uuid from_wire(const p::uuid& id) { return coord::uuid{id}; }
[[nodiscard]] inline p::uuid to_wire(const coord::uuid& id) { return id.bytes; }

// A group member's host as Kafka shows it, the way Java prints an InetAddress: "/127.0.0.1".
[[nodiscard]] inline std::string client_host(const std::string& peer) {
  const auto colon = peer.rfind(':');
  return "/" + (colon == std::string::npos ? peer : peer.substr(0, colon));
}

awaitable<p::describe_client_quotas_response> handle_describe_client_quotas(request_context& ctx,
                                                                            p::describe_client_quotas_request& request);
awaitable<p::alter_client_quotas_response> handle_alter_client_quotas(request_context& ctx,
                                                                      p::alter_client_quotas_request& request);
awaitable<p::describe_cluster_response> handle_describe_cluster(request_context& ctx,
                                                                p::describe_cluster_request& request);
awaitable<p::describe_acls_response> handle_describe_acls(request_context& ctx, p::describe_acls_request& request);
awaitable<p::create_acls_response> handle_create_acls(request_context& ctx, p::create_acls_request& request);
awaitable<p::delete_acls_response> handle_delete_acls(request_context& ctx, p::delete_acls_request& request);
awaitable<p::produce_response> handle_produce(request_context& ctx, p::produce_request& request);
awaitable<p::fetch_response> handle_fetch(request_context& ctx, p::fetch_request& request);
awaitable<p::list_offsets_response> handle_list_offsets(request_context& ctx, p::list_offsets_request& request);
awaitable<p::delete_records_response> handle_delete_records(request_context& ctx, p::delete_records_request& request);
awaitable<p::elect_leaders_response> handle_elect_leaders(request_context& ctx, p::elect_leaders_request& request);
awaitable<p::offset_for_leader_epoch_response> handle_offset_for_leader_epoch(
    request_context& ctx, p::offset_for_leader_epoch_request& request);
awaitable<p::metadata_response> handle_metadata(request_context& ctx, p::metadata_request& request);
awaitable<p::find_coordinator_response> handle_find_coordinator(request_context& ctx,
                                                                p::find_coordinator_request& request);
awaitable<p::join_group_response> handle_join_group(request_context& ctx, p::join_group_request& request);
awaitable<p::sync_group_response> handle_sync_group(request_context& ctx, p::sync_group_request& request);
awaitable<p::heartbeat_response> handle_heartbeat(request_context& ctx, p::heartbeat_request& request);
awaitable<p::leave_group_response> handle_leave_group(request_context& ctx, p::leave_group_request& request);
awaitable<p::offset_commit_response> handle_offset_commit(request_context& ctx, p::offset_commit_request& request);
awaitable<p::offset_fetch_response> handle_offset_fetch(request_context& ctx, p::offset_fetch_request& request);
awaitable<p::describe_groups_response> handle_describe_groups(request_context& ctx,
                                                              p::describe_groups_request& request);
awaitable<p::list_groups_response> handle_list_groups(request_context& ctx, p::list_groups_request& request);
awaitable<p::consumer_group_heartbeat_response> handle_consumer_group_heartbeat(
    request_context& ctx, p::consumer_group_heartbeat_request& request);
awaitable<p::consumer_group_describe_response> handle_consumer_group_describe(
    request_context& ctx, p::consumer_group_describe_request& request);
awaitable<p::delete_groups_response> handle_delete_groups(request_context& ctx, p::delete_groups_request& request);
awaitable<p::offset_delete_response> handle_offset_delete(request_context& ctx, p::offset_delete_request& request);
awaitable<p::describe_producers_response> handle_describe_producers(request_context& ctx,
                                                                    p::describe_producers_request& request);
awaitable<p::api_versions_response> handle_api_versions(request_context& ctx, p::api_versions_request& request);
awaitable<p::create_topics_response> handle_create_topics(request_context& ctx, p::create_topics_request& request);
awaitable<p::delete_topics_response> handle_delete_topics(request_context& ctx, p::delete_topics_request& request);
awaitable<p::init_producer_id_response> handle_init_producer_id(request_context& ctx,
                                                                p::init_producer_id_request& request);
awaitable<p::add_partitions_to_txn_response> handle_add_partitions_to_txn(request_context& ctx,
                                                                          p::add_partitions_to_txn_request& request);
awaitable<p::add_offsets_to_txn_response> handle_add_offsets_to_txn(request_context& ctx,
                                                                    p::add_offsets_to_txn_request& request);
awaitable<p::end_txn_response> handle_end_txn(request_context& ctx, p::end_txn_request& request);
awaitable<p::txn_offset_commit_response> handle_txn_offset_commit(request_context& ctx,
                                                                  p::txn_offset_commit_request& request);
awaitable<p::write_txn_markers_response> handle_write_txn_markers(request_context& ctx,
                                                                  p::write_txn_markers_request& request);
awaitable<p::describe_transactions_response> handle_describe_transactions(request_context& ctx,
                                                                          p::describe_transactions_request& request);
awaitable<p::list_transactions_response> handle_list_transactions(request_context& ctx,
                                                                  p::list_transactions_request& request);
awaitable<p::describe_configs_response> handle_describe_configs(request_context& ctx,
                                                                p::describe_configs_request& request);
awaitable<p::alter_configs_response> handle_alter_configs(request_context& ctx, p::alter_configs_request& request);
awaitable<p::create_partitions_response> handle_create_partitions(request_context& ctx,
                                                                  p::create_partitions_request& request);
awaitable<p::incremental_alter_configs_response> handle_incremental_alter_configs(
    request_context& ctx, p::incremental_alter_configs_request& request);
awaitable<p::describe_log_dirs_response> handle_describe_log_dirs(request_context& ctx,
                                                                  p::describe_log_dirs_request& request);
awaitable<p::alter_partition_reassignments_response> handle_alter_partition_reassignments(
    request_context& ctx, p::alter_partition_reassignments_request& request);
awaitable<p::list_partition_reassignments_response> handle_list_partition_reassignments(
    request_context& ctx, p::list_partition_reassignments_request& request);
awaitable<p::describe_user_scram_credentials_response> handle_describe_user_scram_credentials(
    request_context& ctx, p::describe_user_scram_credentials_request& request);
awaitable<p::alter_user_scram_credentials_response> handle_alter_user_scram_credentials(
    request_context& ctx, p::alter_user_scram_credentials_request& request);
awaitable<p::sasl_handshake_response> handle_sasl_handshake(request_context& ctx, p::sasl_handshake_request& request);
awaitable<p::sasl_authenticate_response> handle_sasl_authenticate(request_context& ctx,
                                                                  p::sasl_authenticate_request& request);

}  // namespace ferry::server::handlers
