#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "authz/acl.h"
#include "server/request_context.h"

namespace ferry::server {

// The authorizer as handlers ask it, for the connection's principal and address (Kafka's AclAuthorizer:
// authz/acl_snapshot.h has the rules). Without an authorizer (authorizer.class.name unset) everything is allowed.
// The ACLs are those of the request's view of the cluster, taken once per request.

// Whether the request may do `op` on the resource. A refusal is logged (rate-limited: principal, client address,
// operation, resource and API) and counted in ferry_authorization_denials_total.
bool authorize(request_context& ctx, authz::operation op, authz::resource_type type, std::string_view name);
// The same, neither logged nor counted: for what a listing leaves out (Kafka's logIfDenied = false).
bool may(request_context& ctx, authz::operation op, authz::resource_type type, std::string_view name);
// Whether the request may do `op` on some resource of `type` (KIP-679's authorizeByResourceType).
bool authorize_any(request_context& ctx, authz::operation op, authz::resource_type type);
// The cluster resource's checks.
inline bool authorize_cluster(request_context& ctx, authz::operation op) {
  return authorize(ctx, op, authz::resource_type::cluster, authz::cluster_name);
}

// What only brokers send each other (follower fetches, transaction markers, transaction verification): ClusterAction
// on the cluster. Such requests are exempt from the request quota, as in Kafka.
inline bool authorize_broker_request(request_context& ctx) {
  const bool allowed = authorize_cluster(ctx, authz::operation::cluster_action);
  ctx.request_quota_exempt = allowed;
  return allowed;
}

// may() as a function that outlives the request, for work that runs later (a coordinator resolving a regular
// expression subscription): it keeps the request's ACLs, principal and address.
using access_check = std::function<bool(authz::operation, authz::resource_type, std::string_view)>;
access_check deferred_may(request_context& ctx);

// KIP-430's authorized operations: bit 1 << code for each operation of the resource's type that the request may do.
std::int32_t authorized_operations(request_context& ctx, authz::resource_type type, std::string_view name);
// The cluster's, as Metadata v8-10 and DescribeCluster report them: 0 without Describe on the cluster (Kafka's rule).
std::int32_t cluster_operations(request_context& ctx);
// What a response says when the client did not ask for them.
inline constexpr std::int32_t operations_not_requested = INT32_MIN;

}  // namespace ferry::server
