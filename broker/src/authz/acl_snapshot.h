#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "authz/acl.h"

namespace ferry::authz {

// What DescribeAcls and DeleteAcls select: a null name or principal or host matches any; the enums' `any`
// matches any; pattern `match` selects every pattern that applies to the name (literal equal or "*", or a
// prefix of it).
struct acl_filter {
  resource_type type = resource_type::any;
  std::optional<std::string> name;
  pattern_type pattern = pattern_type::any;
  std::optional<std::string> principal;
  std::optional<std::string> host;
  operation op = operation::any;
  permission perm = permission::any;

  [[nodiscard]] bool matches(const acl_binding& binding) const;
};

// Who asks, from where.
struct requester {
  std::string_view principal;  // "User:alice"
  std::string_view host;       // the client's address as Java writes it
};

// The settings the decision depends on.
struct decision_settings {
  std::vector<std::string> super_users;  // principals that pass every check
  bool allow_if_no_acl_found = false;    // allow.everyone.if.no.acl.found
};

// The ACLs in force at one moment, immutable once built, hashed by resource type and pattern name: one decision
// costs a lookup of the literal name, one of "*" and one per distinct length of the prefixed ACLs' names (at most
// the name's length), whatever the number of ACLs. Kafka's rules (AclAuthorizer.authorizeAction):
//   - a super user passes;
//   - the ACLs that apply are those on the literal name, on the literal "*" and on every prefix of the name;
//   - with none, allow.everyone.if.no.acl.found decides, whoever asks;
//   - otherwise a matching DENY refuses, and a matching ALLOW is required. An entry matches when its principal
//     is the requester's or "User:*", its host the requester's or "*", and its operation the one asked or All;
//     an ALLOW of Read, Write, Delete or Alter also allows Describe, and of AlterConfigs DescribeConfigs.
class acl_snapshot {
 public:
  acl_snapshot() = default;
  explicit acl_snapshot(const std::vector<acl_binding>& bindings);

  [[nodiscard]] bool authorize(const requester& who, operation op, resource_type type, std::string_view name,
                               const decision_settings& settings) const;
  // Whether `who` may do `op` on some resource of `type` (KIP-679, Kafka's Authorizer.authorizeByResourceType):
  // an ALLOW that no DENY covers, for a literal name or a prefix.
  [[nodiscard]] bool authorize_any(const requester& who, operation op, resource_type type,
                                   const decision_settings& settings) const;

  [[nodiscard]] std::vector<acl_binding> select(const acl_filter& filter) const;
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct name_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
  };
  using entries_by_name = std::unordered_map<std::string, std::vector<acl_entry>, name_hash, std::equal_to<>>;
  struct of_type {
    entries_by_name literal;
    entries_by_name prefixed;
    std::vector<std::size_t> prefix_lengths;  // of the names in `prefixed`, distinct, ascending
  };

  [[nodiscard]] const of_type* of(resource_type type) const;
  // The entries of the ACLs that apply to `name`, literal and prefixed, passed to `visit`.
  template <typename Visit>
  void for_each_applying(const of_type& acls, std::string_view name, Visit&& visit) const;

  std::array<of_type, 8> types_;  // by resource_type's code
  std::size_t size_ = 0;
};

}  // namespace ferry::authz
