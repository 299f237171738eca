#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::authz {

// Kafka's access control lists: what one ACL says, with the codes the wire carries (CreateAcls, DescribeAcls,
// DeleteAcls) and the names ZooKeeper stores and Kafka's tools print.

enum class resource_type : std::int8_t {
  unknown = 0,
  any = 1,  // filters only
  topic = 2,
  group = 3,
  cluster = 4,
  transactional_id = 5,
  delegation_token = 6,
  user = 7,
};

enum class pattern_type : std::int8_t {
  unknown = 0,
  any = 1,    // filters only: any pattern type, the exact name
  match = 2,  // filters only: every pattern that applies to the name
  literal = 3,
  prefixed = 4,
};

enum class operation : std::int8_t {
  unknown = 0,
  any = 1,  // filters only
  all = 2,
  read = 3,
  write = 4,
  create = 5,
  remove = 6,  // Kafka's Delete
  alter = 7,
  describe = 8,
  cluster_action = 9,
  describe_configs = 10,
  alter_configs = 11,
  idempotent_write = 12,
  create_tokens = 13,
  describe_tokens = 14,
};

enum class permission : std::int8_t {
  unknown = 0,
  any = 1,  // filters only
  deny = 2,
  allow = 3,
};

// The one cluster resource's name.
inline constexpr std::string_view cluster_name = "kafka-cluster";
// As a literal resource name, a principal ("User:*") or a host: every one.
inline constexpr std::string_view wildcard = "*";
inline constexpr std::string_view wildcard_principal = "User:*";

struct resource_pattern {
  resource_type type = resource_type::unknown;
  std::string name;
  pattern_type pattern = pattern_type::literal;

  auto operator<=>(const resource_pattern&) const = default;
};

struct acl_entry {
  std::string principal;  // "User:alice"
  std::string host;       // an address as Java writes it, or "*"
  operation op = operation::unknown;
  permission perm = permission::unknown;

  auto operator<=>(const acl_entry&) const = default;
};

struct acl_binding {
  resource_pattern resource;
  acl_entry entry;

  auto operator<=>(const acl_binding&) const = default;
};

// Names as ZooKeeper stores them and kafka-acls.sh prints them: "Topic", "TransactionalId", "IdempotentWrite",
// "Allow", "LITERAL". Parsing ignores case and underscores, so "TRANSACTIONAL_ID" (change notifications) and
// "TransactionalId" (ACL znodes) both read.
[[nodiscard]] std::string_view name_of(resource_type t);
[[nodiscard]] std::string_view name_of(pattern_type p);
[[nodiscard]] std::string_view name_of(operation op);
[[nodiscard]] std::string_view name_of(permission p);
// Upper case with underscores, as Java's enum names: "TRANSACTIONAL_ID".
[[nodiscard]] std::string_view enum_name_of(resource_type t);
[[nodiscard]] std::optional<resource_type> parse_resource_type(std::string_view text);
[[nodiscard]] std::optional<pattern_type> parse_pattern_type(std::string_view text);
[[nodiscard]] std::optional<operation> parse_operation(std::string_view text);
[[nodiscard]] std::optional<permission> parse_permission(std::string_view text);

// The enums from their wire codes: a code Kafka does not define reads as unknown (as Java's fromCode does).
[[nodiscard]] resource_type resource_type_from_code(std::int8_t code);
[[nodiscard]] pattern_type pattern_type_from_code(std::int8_t code);
[[nodiscard]] operation operation_from_code(std::int8_t code);
[[nodiscard]] permission permission_from_code(std::int8_t code);
[[nodiscard]] constexpr std::int8_t code_of(resource_type t) { return static_cast<std::int8_t>(t); }
[[nodiscard]] constexpr std::int8_t code_of(pattern_type p) { return static_cast<std::int8_t>(p); }
[[nodiscard]] constexpr std::int8_t code_of(operation op) { return static_cast<std::int8_t>(op); }
[[nodiscard]] constexpr std::int8_t code_of(permission p) { return static_cast<std::int8_t>(p); }

// Whether an ACL may grant `op` on resources of type `t` (Kafka's AclEntry.supportedOperations, and All).
[[nodiscard]] bool applies_to(resource_type t, operation op);

// Why CreateAcls refuses a binding (Kafka's checks), or nullopt when it may be stored.
[[nodiscard]] std::optional<std::string> invalid_reason(const acl_binding& binding);

}  // namespace ferry::authz
