#include <string>

#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

constexpr std::string_view transaction_version_feature = "transaction.version";
constexpr std::int16_t max_transaction_version = 2;
// Finalized features never change while a broker runs: one epoch, newer than the -1 of "none known".
constexpr std::int64_t finalized_features_epoch = 0;

// The newest version of an API that producers use only at transaction version 2 (KIP-890 part 2): below that
// level the range ends before it, so no client takes the new flow on a cluster that has not finalized it.
std::int16_t max_version_at(const p::api_info& api, std::int16_t transaction_version) {
  if (transaction_version >= 2) return api.max_version;
  switch (api.key) {
    case p::produce_request::api_key:
      return std::min<std::int16_t>(api.max_version, 11);
    case p::end_txn_request::api_key:
    case p::txn_offset_commit_request::api_key:
      return std::min<std::int16_t>(api.max_version, 4);
    default:
      return api.max_version;
  }
}

}  // namespace

// Advertises every API the dispatcher serves, with the ranges from broker/schemas. Those ranges are chosen
// for real clients (docs/protocol.md): Produce from v0 because librdkafka compresses only when v0 is in the
// range, Metadata from v0 for kafka-python's probe, Fetch v4 and up so batches are never down-converted.
// v3+ also names the transaction.version feature, finalized at the broker's transaction.version.
awaitable<p::api_versions_response> handle_api_versions(request_context& ctx, p::api_versions_request&) {
  p::api_versions_response response;
  const auto level = ctx.broker.config.transaction_version;
  for (const auto& api : p::all_apis)
    response.api_keys.push_back({api.key, api.min_version, max_version_at(api, level)});
  response.supported_features.push_back({std::string(transaction_version_feature), 0, max_transaction_version});
  response.finalized_features_epoch = finalized_features_epoch;
  // Kafka lists a feature as finalized only above level 0.
  if (level > 0) response.finalized_features.push_back({std::string(transaction_version_feature), level, level});
  response.error_code = ctx.error(p::error_code::none);
  co_return response;
}

}  // namespace ferry::server::handlers
