#include "authz/acl_snapshot.h"

#include <algorithm>
#include <array>
#include <set>
#include <span>

namespace ferry::authz {
namespace {

bool entry_matches(const acl_entry& e, const requester& who, operation op, permission perm) {
  return e.perm == perm && (e.principal == who.principal || e.principal == wildcard_principal) &&
         (e.host == who.host || e.host == wildcard) && (e.op == op || e.op == operation::all);
}

constexpr std::array<operation, 5> granting_describe{operation::describe, operation::read, operation::write,
                                                     operation::remove, operation::alter};
constexpr std::array<operation, 2> granting_describe_configs{operation::describe_configs, operation::alter_configs};

// The operations whose ALLOW grants `op` (no allocation: this runs on every authorized request).
std::span<const operation> granting(const operation& op) {
  switch (op) {
    case operation::describe:
      return granting_describe;
    case operation::describe_configs:
      return granting_describe_configs;
    default:
      return {&op, 1};
  }
}

bool is_super_user(const requester& who, const decision_settings& settings) {
  return std::find(settings.super_users.begin(), settings.super_users.end(), who.principal) !=
         settings.super_users.end();
}

}  // namespace

bool acl_filter::matches(const acl_binding& binding) const {
  const auto& r = binding.resource;
  const auto& e = binding.entry;
  if (type != resource_type::any && type != r.type) return false;
  if (pattern != pattern_type::any && pattern != pattern_type::match && pattern != r.pattern) return false;
  if (name) {
    if (pattern == pattern_type::any || pattern == r.pattern) {
      if (*name != r.name) return false;
    } else if (r.pattern == pattern_type::literal) {
      if (*name != r.name && r.name != wildcard) return false;
    } else if (!name->starts_with(r.name)) {
      return false;
    }
  }
  return (!principal || *principal == e.principal) && (!host || *host == e.host) &&
         (op == operation::any || op == e.op) && (perm == permission::any || perm == e.perm);
}

acl_snapshot::acl_snapshot(const std::vector<acl_binding>& bindings) {
  for (const auto& b : bindings) {
    const auto code = static_cast<std::size_t>(b.resource.type);
    if (code >= types_.size()) continue;
    auto& by_name = b.resource.pattern == pattern_type::prefixed ? types_[code].prefixed : types_[code].literal;
    by_name[b.resource.name].push_back(b.entry);
    ++size_;
  }
  for (auto& acls : types_) {
    for (const auto& [name, entries] : acls.prefixed) acls.prefix_lengths.push_back(name.size());
    std::sort(acls.prefix_lengths.begin(), acls.prefix_lengths.end());
    acls.prefix_lengths.erase(std::unique(acls.prefix_lengths.begin(), acls.prefix_lengths.end()),
                              acls.prefix_lengths.end());
  }
}

const acl_snapshot::of_type* acl_snapshot::of(resource_type type) const {
  const auto code = static_cast<std::size_t>(type);
  return code < types_.size() ? &types_[code] : nullptr;
}

template <typename Visit>
void acl_snapshot::for_each_applying(const of_type& acls, std::string_view name, Visit&& visit) const {
  const auto each = [&](const entries_by_name& by_name, std::string_view key) {
    if (const auto it = by_name.find(key); it != by_name.end())
      for (const auto& e : it->second) visit(e);
  };
  each(acls.literal, name);
  if (name != wildcard) each(acls.literal, wildcard);
  for (const std::size_t length : acls.prefix_lengths) {
    if (length > name.size()) break;
    each(acls.prefixed, name.substr(0, length));
  }
}

bool acl_snapshot::authorize(const requester& who, operation op, resource_type type, std::string_view name,
                             const decision_settings& settings) const {
  if (is_super_user(who, settings)) return true;
  const of_type* acls = of(type);
  bool any_applies = false;
  bool denied = false;
  bool allowed = false;
  const auto allowing = granting(op);
  if (acls != nullptr) {
    for_each_applying(*acls, name, [&](const acl_entry& e) {
      any_applies = true;
      if (entry_matches(e, who, op, permission::deny)) denied = true;
      for (const operation granted : allowing)
        if (entry_matches(e, who, granted, permission::allow)) allowed = true;
    });
  }
  if (!any_applies) return settings.allow_if_no_acl_found;
  return !denied && allowed;
}

bool acl_snapshot::authorize_any(const requester& who, operation op, resource_type type,
                                 const decision_settings& settings) const {
  // As Kafka does: a name no ACL is written for stands for what the ACLs say about every name, so super users,
  // allow.everyone.if.no.acl.found and wildcard grants pass here.
  if (authorize(who, op, type, "hardcode", settings)) return true;
  const of_type* acls = of(type);
  if (acls == nullptr) return false;
  // Only the operation asked (or All) counts here, not the ones that imply it.
  std::set<std::string_view> denied_literal;
  std::set<std::string_view> denied_prefix;
  std::vector<std::pair<std::string_view, bool>> allowed;  // name, prefixed
  bool wildcard_allow = false;
  for (const bool prefixed : {false, true}) {
    for (const auto& [name, entries] : prefixed ? acls->prefixed : acls->literal) {
      const bool is_wildcard = !prefixed && name == wildcard;
      for (const auto& e : entries) {
        if (entry_matches(e, who, op, permission::deny)) {
          if (is_wildcard) return false;
          (prefixed ? denied_prefix : denied_literal).insert(name);
        } else if (entry_matches(e, who, op, permission::allow)) {
          if (is_wildcard)
            wildcard_allow = true;
          else
            allowed.emplace_back(name, prefixed);
        }
      }
    }
  }
  if (wildcard_allow) return true;
  // An ALLOW counts unless a DENY covers every name it covers: the same literal, or a prefix of its name.
  for (const auto& [name, prefixed] : allowed) {
    if (!prefixed && denied_literal.contains(name)) continue;
    bool covered = false;
    for (std::size_t length = 1; length <= name.size() && !covered; ++length)
      covered = denied_prefix.contains(name.substr(0, length));
    if (!covered) return true;
  }
  return false;
}

std::vector<acl_binding> acl_snapshot::select(const acl_filter& filter) const {
  std::vector<acl_binding> out;
  for (std::size_t code = 0; code < types_.size(); ++code) {
    const auto type = static_cast<resource_type>(code);
    for (const auto pattern : {pattern_type::literal, pattern_type::prefixed}) {
      const auto& by_name = pattern == pattern_type::literal ? types_[code].literal : types_[code].prefixed;
      // In name order, whatever the hashing: DescribeAcls and kafka-acls --list show a stable listing.
      std::vector<const entries_by_name::value_type*> named;
      named.reserve(by_name.size());
      for (const auto& entry : by_name) named.push_back(&entry);
      std::sort(named.begin(), named.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
      for (const auto* entry : named) {
        const auto& [name, entries] = *entry;
        for (const auto& e : entries) {
          acl_binding b{{type, name, pattern}, e};
          if (filter.matches(b)) out.push_back(std::move(b));
        }
      }
    }
  }
  return out;
}

}  // namespace ferry::authz
