#pragma once

// What the ACL APIs (DescribeAcls, CreateAcls, DeleteAcls) share: filters read from the wire, and the waits that
// let a broker answer only once its own view shows the change it made.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "authz/acl_snapshot.h"
#include "server/request_context.h"

namespace ferry::server::handlers {

// Kafka's answer to the ACL APIs on a broker without an authorizer.
inline constexpr std::string_view no_authorizer_message = "No Authorizer is configured on the broker";
// How long a change may take to reach this broker's view before it answers anyway (the change is stored).
inline constexpr std::chrono::seconds acl_view_wait{10};

// A filter from its wire fields; nullopt when any of them is UNKNOWN (a code Kafka does not define), which Kafka
// refuses with INVALID_REQUEST.
template <typename Wire>
std::optional<authz::acl_filter> filter_from_wire(const Wire& w) {
  authz::acl_filter f{.type = authz::resource_type_from_code(w.resource_type_filter),
                      .name = w.resource_name_filter,
                      .pattern = authz::pattern_type_from_code(w.pattern_type_filter),
                      .principal = w.principal_filter,
                      .host = w.host_filter,
                      .op = authz::operation_from_code(w.operation),
                      .perm = authz::permission_from_code(w.permission_type)};
  if (f.type == authz::resource_type::unknown || f.pattern == authz::pattern_type::unknown ||
      f.op == authz::operation::unknown || f.perm == authz::permission::unknown)
    return std::nullopt;
  return f;
}

// The filter that selects exactly `binding`.
inline authz::acl_filter exactly(const authz::acl_binding& binding) {
  return {.type = binding.resource.type,
          .name = binding.resource.name,
          .pattern = binding.resource.pattern,
          .principal = binding.entry.principal,
          .host = binding.entry.host,
          .op = binding.entry.op,
          .perm = binding.entry.perm};
}

// Waits until this broker's view shows every one of `bindings` (`present`) or none of them, so the caller's next
// request here is decided by the change it made; logs when it does not within acl_view_wait (the change is
// stored all the same).
boost::asio::awaitable<void> await_acls_in_view(request_context& ctx, const std::vector<authz::acl_binding>& bindings,
                                                bool present);

}  // namespace ferry::server::handlers
