#pragma once

// Client quotas on the request path (KIP-219): what a request used is recorded against its budget, and a client
// over its quota is throttled: the response carries throttle_time_ms, and the connection reads nothing more for
// that long, so clients that ignore the field are held back too.
#include <string_view>

#include "quota/client_quotas.h"
#include "server/request_context.h"

namespace ferry::server {

// The quota user of a principal: its name ("alice" for User:alice; "ANONYMOUS" unauthenticated), as Kafka's.
[[nodiscard]] std::string_view quota_user(std::string_view principal);

// Records `amount` (bytes) against the request's budget of `kind`; the throttle it earns, also kept in
// ctx.throttle_ms (the larger one wins). 0 without quotas.
std::int32_t record_quota(request_context& ctx, quota::quota_kind kind, double amount);
// Charges the request quota (request_percentage) with the thread time the connection used since the last charge:
// this request's, up to now, and the network work around it (reading it, writing the previous answer). The
// throttle it earns, kept in ctx.throttle_ms too. Exempt requests (ctx.request_quota_exempt) are not charged, and
// neither is time before a quota exists: it is taken either way.
std::int32_t record_request_time(request_context& ctx);
// Takes a recorded amount back (a throttled fetch sends no data).
void unrecord_quota(request_context& ctx, quota::quota_kind kind, double amount);

// The controller mutation quota (KIP-599) of a request that creates or deletes partitions: whether a change of
// `partitions` may go ahead (client_quotas::record_mutation), its throttle kept in ctx.throttle_ms. Strict for the
// versions that know THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): a client
// in debt is refused; older versions are always let through and throttled by their debt. validate_only requests do
// not ask. Called on the ZooKeeper threads too, while the request waits for them.
bool spend_mutation_quota(request_context& ctx, std::int64_t partitions, bool strict);

}  // namespace ferry::server
