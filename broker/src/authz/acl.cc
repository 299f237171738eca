#include "authz/acl.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace ferry::authz {
namespace {

// Compares ignoring case and underscores.
bool loosely_equal(std::string_view text, std::string_view name) {
  std::size_t i = 0;
  std::size_t j = 0;
  for (;;) {
    while (i < text.size() && text[i] == '_') ++i;
    while (j < name.size() && name[j] == '_') ++j;
    if (i == text.size() || j == name.size()) return i == text.size() && j == name.size();
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(name[j])))
      return false;
    ++i;
    ++j;
  }
}

template <typename Enum, std::size_t N>
std::string_view lookup(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [e, name] : names)
    if (e == value) return name;
  return "Unknown";
}

template <typename Enum, std::size_t N>
std::optional<Enum> parse(const std::array<std::pair<Enum, std::string_view>, N>& names, std::string_view text) {
  for (const auto& [e, name] : names)
    if (loosely_equal(text, name)) return e;
  return std::nullopt;
}

constexpr std::array<std::pair<resource_type, std::string_view>, 7> resource_names{{
    {resource_type::any, "Any"},
    {resource_type::topic, "Topic"},
    {resource_type::group, "Group"},
    {resource_type::cluster, "Cluster"},
    {resource_type::transactional_id, "TransactionalId"},
    {resource_type::delegation_token, "DelegationToken"},
    {resource_type::user, "User"},
}};

constexpr std::array<std::pair<resource_type, std::string_view>, 7> resource_enum_names{{
    {resource_type::any, "ANY"},
    {resource_type::topic, "TOPIC"},
    {resource_type::group, "GROUP"},
    {resource_type::cluster, "CLUSTER"},
    {resource_type::transactional_id, "TRANSACTIONAL_ID"},
    {resource_type::delegation_token, "DELEGATION_TOKEN"},
    {resource_type::user, "USER"},
}};

constexpr std::array<std::pair<pattern_type, std::string_view>, 4> pattern_names{{
    {pattern_type::any, "ANY"},
    {pattern_type::match, "MATCH"},
    {pattern_type::literal, "LITERAL"},
    {pattern_type::prefixed, "PREFIXED"},
}};

constexpr std::array<std::pair<operation, std::string_view>, 14> operation_names{{
    {operation::any, "Any"},
    {operation::all, "All"},
    {operation::read, "Read"},
    {operation::write, "Write"},
    {operation::create, "Create"},
    {operation::remove, "Delete"},
    {operation::alter, "Alter"},
    {operation::describe, "Describe"},
    {operation::cluster_action, "ClusterAction"},
    {operation::describe_configs, "DescribeConfigs"},
    {operation::alter_configs, "AlterConfigs"},
    {operation::idempotent_write, "IdempotentWrite"},
    {operation::create_tokens, "CreateTokens"},
    {operation::describe_tokens, "DescribeTokens"},
}};

constexpr std::array<std::pair<permission, std::string_view>, 3> permission_names{{
    {permission::any, "Any"},
    {permission::deny, "Deny"},
    {permission::allow, "Allow"},
}};

bool concrete(resource_type t) { return t >= resource_type::topic && t <= resource_type::user; }

}  // namespace

std::string_view name_of(resource_type t) { return lookup(resource_names, t); }
std::string_view name_of(pattern_type p) { return lookup(pattern_names, p); }
std::string_view name_of(operation op) { return lookup(operation_names, op); }
std::string_view name_of(permission p) { return lookup(permission_names, p); }
std::string_view enum_name_of(resource_type t) { return lookup(resource_enum_names, t); }

std::optional<resource_type> parse_resource_type(std::string_view text) { return parse(resource_names, text); }
std::optional<pattern_type> parse_pattern_type(std::string_view text) { return parse(pattern_names, text); }
std::optional<operation> parse_operation(std::string_view text) { return parse(operation_names, text); }
std::optional<permission> parse_permission(std::string_view text) { return parse(permission_names, text); }

resource_type resource_type_from_code(std::int8_t code) {
  return code >= 0 && code <= code_of(resource_type::user) ? static_cast<resource_type>(code) : resource_type::unknown;
}
pattern_type pattern_type_from_code(std::int8_t code) {
  return code >= 0 && code <= code_of(pattern_type::prefixed) ? static_cast<pattern_type>(code) : pattern_type::unknown;
}
operation operation_from_code(std::int8_t code) {
  return code >= 0 && code <= code_of(operation::describe_tokens) ? static_cast<operation>(code) : operation::unknown;
}
permission permission_from_code(std::int8_t code) {
  return code >= 0 && code <= code_of(permission::allow) ? static_cast<permission>(code) : permission::unknown;
}

bool applies_to(resource_type t, operation op) {
  if (op == operation::all) return concrete(t);
  switch (t) {
    case resource_type::topic:
      return op == operation::read || op == operation::write || op == operation::create || op == operation::remove ||
             op == operation::alter || op == operation::describe || op == operation::describe_configs ||
             op == operation::alter_configs;
    case resource_type::group:
      return op == operation::read || op == operation::describe || op == operation::remove;
    case resource_type::cluster:
      return op == operation::create || op == operation::cluster_action || op == operation::describe ||
             op == operation::alter || op == operation::describe_configs || op == operation::alter_configs ||
             op == operation::idempotent_write;
    case resource_type::transactional_id:
      return op == operation::describe || op == operation::write;
    case resource_type::delegation_token:
      return op == operation::describe;
    case resource_type::user:
      return op == operation::create_tokens || op == operation::describe_tokens;
    default:
      return false;
  }
}

std::optional<std::string> invalid_reason(const acl_binding& binding) {
  const auto& r = binding.resource;
  const auto& e = binding.entry;
  if (!concrete(r.type)) return "the resource type must be a concrete one, not " + std::string(name_of(r.type));
  if (r.pattern != pattern_type::literal && r.pattern != pattern_type::prefixed)
    return "the pattern type must be LITERAL or PREFIXED, not " + std::string(name_of(r.pattern));
  if (r.name.empty()) return "the resource name must not be empty";
  if (r.name.find('/') != std::string::npos) return "the resource name must not contain '/'";
  if (r.type == resource_type::cluster && (r.name != cluster_name || r.pattern != pattern_type::literal))
    return "the cluster resource is the literal name kafka-cluster";
  if (e.perm != permission::allow && e.perm != permission::deny) return "the permission must be ALLOW or DENY";
  if (!applies_to(r.type, e.op))
    return "operation " + std::string(name_of(e.op)) + " does not apply to " + std::string(name_of(r.type)) + "s";
  const auto colon = e.principal.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == e.principal.size())
    return "the principal must be TYPE:NAME, as User:alice";
  if (e.host.empty()) return "the host must be an address or *";
  return std::nullopt;
}

}  // namespace ferry::authz
