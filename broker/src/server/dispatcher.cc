#include "server/dispatcher.h"

#include <chrono>
#include <stdexcept>

#include "base/log.h"
#include "server/client_quota_use.h"
#include "server/handlers/handlers.h"

namespace ferry::server {
namespace asio = boost::asio;
using net::request_outcome;

namespace {

bool is_flexible(const protocol::api_info& info, std::int16_t version) {
  return info.first_flexible_version >= 0 && version >= info.first_flexible_version;
}

request_outcome close_connection() { return {request_outcome::action::close, {}}; }

// KIP-511: an ApiVersions request in a version we do not serve is answered in v0, with UNSUPPORTED_VERSION
// and our range for ApiVersions, so the client can retry in one we do.
request_outcome unsupported_api_versions(std::int32_t correlation_id) {
  request_outcome out;
  protocol::begin_response_frame(out.response, correlation_id, false);
  protocol::api_versions_response response;
  response.error_code = protocol::code(protocol::error_code::unsupported_version);
  response.api_keys.push_back({protocol::api_versions_key, protocol::api_versions_response::min_version,
                               protocol::api_versions_response::max_version});
  protocol::writer w(out.response);
  response.encode(w, 0);
  protocol::finish_frame(out.response);
  return out;
}

}  // namespace

namespace {

// One request of an API: decoded, handled, and its response framed (or the connection closed).
template <typename Request, typename Response>
asio::awaitable<request_outcome> serve(asio::awaitable<Response> (*handler)(request_context&, Request&),
                                       request_context& ctx, protocol::reader& r) {
  Request request;
  if (!request.decode(r, ctx.version())) co_return close_connection();
#ifdef __clang_analyzer__
  // The static analyzer does not model coroutine frames: depending on its budget it reports asio's promise state
  // in await_transform as uninitialized for some handler or other. The handlers are analysed in their own files.
  (void)handler;
  Response response{};
#else
  Response response = co_await handler(ctx, request);
#endif
  record_request_time(ctx);
  // What the client quotas earned it (server/client_quota_use.h), in every response that can say so.
  if constexpr (requires { response.throttle_time_ms; }) response.throttle_time_ms = ctx.throttle_ms;
  if (ctx.close_connection) co_return close_connection();
  if (!ctx.send_response) co_return request_outcome{request_outcome::action::no_response, {}};
  request_outcome out;
  const bool flexible = Request::first_flexible_version >= 0 && ctx.version() >= Request::first_flexible_version;
  protocol::begin_response_frame(out.response, ctx.header.correlation_id,
                                 protocol::uses_flexible_response_header(Request::api_key, flexible));
  protocol::writer w(out.response);
  response.encode(w, ctx.version());
  protocol::finish_frame(out.response);
  co_return out;
}

}  // namespace

template <typename Request, typename Response>
void dispatcher::add(asio::awaitable<Response> (*handler)(request_context&, Request&)) {
  const auto key = static_cast<std::size_t>(Request::api_key);
  const protocol::api_info* info = nullptr;
  for (const auto& api : protocol::all_apis)
    if (api.key == Request::api_key) info = &api;
  if (info == nullptr || table_.at(key)) throw std::logic_error("handler table: duplicate or unknown API");
  table_[key] = entry{*info, broker_.metrics.for_api(std::string(info->name)),
                      [handler](request_context& ctx, protocol::reader& r) { return serve(handler, ctx, r); }};
}

dispatcher::dispatcher(broker_context& broker) : broker_(broker) {
  add(handlers::handle_consumer_group_heartbeat);
  add(handlers::handle_consumer_group_describe);
  add(handlers::handle_produce);
  add(handlers::handle_fetch);
  add(handlers::handle_list_offsets);
  add(handlers::handle_delete_records);
  add(handlers::handle_offset_for_leader_epoch);
  add(handlers::handle_metadata);
  add(handlers::handle_find_coordinator);
  add(handlers::handle_join_group);
  add(handlers::handle_sync_group);
  add(handlers::handle_heartbeat);
  add(handlers::handle_leave_group);
  add(handlers::handle_offset_commit);
  add(handlers::handle_offset_fetch);
  add(handlers::handle_describe_groups);
  add(handlers::handle_list_groups);
  add(handlers::handle_delete_groups);
  add(handlers::handle_offset_delete);
  add(handlers::handle_describe_producers);
  add(handlers::handle_api_versions);
  add(handlers::handle_create_topics);
  add(handlers::handle_delete_topics);
  add(handlers::handle_init_producer_id);
  add(handlers::handle_add_partitions_to_txn);
  add(handlers::handle_add_offsets_to_txn);
  add(handlers::handle_end_txn);
  add(handlers::handle_txn_offset_commit);
  add(handlers::handle_write_txn_markers);
  add(handlers::handle_describe_transactions);
  add(handlers::handle_list_transactions);
  add(handlers::handle_describe_configs);
  add(handlers::handle_alter_configs);
  add(handlers::handle_create_partitions);
  add(handlers::handle_incremental_alter_configs);
  add(handlers::handle_elect_leaders);
  add(handlers::handle_describe_log_dirs);
  add(handlers::handle_alter_partition_reassignments);
  add(handlers::handle_list_partition_reassignments);
  add(handlers::handle_describe_user_scram_credentials);
  add(handlers::handle_alter_user_scram_credentials);
  add(handlers::handle_describe_client_quotas);
  add(handlers::handle_alter_client_quotas);
  add(handlers::handle_describe_cluster);
  add(handlers::handle_describe_acls);
  add(handlers::handle_create_acls);
  add(handlers::handle_delete_acls);
  add(handlers::handle_sasl_handshake);
  add(handlers::handle_sasl_authenticate);
  for (const auto& api : protocol::all_apis)
    if (!table_.at(static_cast<std::size_t>(api.key)))
      throw std::logic_error("no handler for API " + std::string(api.name));
}

asio::awaitable<request_outcome> dispatcher::handle(std::span<std::byte> frame, const net::connection_info& from) {
  const auto started = std::chrono::steady_clock::now();
  protocol::reader r(frame);
  protocol::request_header header;
  if (!protocol::decode_request_header(r, header)) {
    FERRY_LOG_LIMITED(warn, "server", 1000) << "closing " << from.peer << ": request header does not parse";
    co_return close_connection();
  }
  const auto key = static_cast<std::size_t>(header.api_key);
  entry* e = header.api_key >= 0 && key < table_.size() && table_[key] ? &*table_[key] : nullptr;
  if (e == nullptr) {
    FERRY_LOG_LIMITED(warn, "server", 1000) << "closing " << from.peer << ": unknown API key " << header.api_key;
    co_return close_connection();
  }
  e->metrics.requests->Increment();
  if (header.api_version < e->info.min_version || header.api_version > e->info.max_version) {
    if (header.api_key == protocol::api_versions_key) co_return unsupported_api_versions(header.correlation_id);
    e->metrics.errors->Increment();
    FERRY_LOG_LIMITED(warn, "server", 1000)
        << "closing " << from.peer << ": " << e->info.name << " v" << header.api_version << " is not supported ("
        << e->info.min_version << "-" << e->info.max_version << ")";
    co_return close_connection();
  }
  if (is_flexible(e->info, header.api_version)) protocol::skip_header_tags(r);

  request_context ctx{broker_, header, from};
  ctx.request_bytes = frame.size();
  request_outcome outcome = co_await e->run(ctx, r);
  outcome.mute_after = std::chrono::milliseconds(ctx.throttle_ms);
  if (outcome.what == request_outcome::action::close && !ctx.close_connection) {
    FERRY_LOG_LIMITED(warn, "server", 1000) << "closing " << from.peer << ": " << e->info.name << " v"
                                            << header.api_version << " request body does not parse";
  }
  if (ctx.errors > 0 || outcome.what == request_outcome::action::close) e->metrics.errors->Increment();
  e->metrics.latency->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  co_return outcome;
}

}  // namespace ferry::server
