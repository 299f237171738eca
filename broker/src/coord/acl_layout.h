#pragma once

// Kafka's ZooKeeper layout of ACLs (ZkData.scala, AclAuthorizer in ZooKeeper mode), so Ferry brokers and Kafka's
// ZooKeeper-mode tools read and write the same ACLs (docs/zookeeper-layout.md):
//
//   /kafka-acl/<Type>/<name>                     LITERAL patterns   {"version":1,"acls":[{"principal":
//   /kafka-acl-extended/prefixed/<Type>/<name>   PREFIXED patterns    "User:alice","permissionType":"Allow",
//                                                                     "operation":"Read","host":"*"}]}
//   /kafka-acl-changes/acl_changes_<seq>             "TOPIC:orders" after a change to a LITERAL pattern's ACLs
//   /kafka-acl-extended-changes/acl_changes_<seq>    {"version":1,"resourceType":"TOPIC","name":"orders",
//                                                     "patternType":"PREFIXED"} after a PREFIXED one's
//
// <Type> is the resource type's name in PascalCase ("TransactionalId"). An empty set of ACLs deletes the znode;
// writes are conditional on its version. Decoders never throw: malformed content is errc::invalid_data.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "authz/acl.h"
#include "base/result.h"

namespace ferry::coord::layout {

inline constexpr std::string_view literal_acls_path = "/kafka-acl";
inline constexpr std::string_view prefixed_acls_path = "/kafka-acl-extended/prefixed";
inline constexpr std::string_view literal_acl_changes_path = "/kafka-acl-changes";
inline constexpr std::string_view extended_acl_changes_path = "/kafka-acl-extended-changes";
inline constexpr std::string_view acl_change_prefix = "acl_changes_";

// /kafka-acl/<Type> or /kafka-acl-extended/prefixed/<Type>: the parent of a type's patterns' znodes.
std::string acl_type_path(authz::resource_type type, authz::pattern_type pattern);
// The znode holding the ACLs of `resource` (a LITERAL or PREFIXED pattern).
std::string acl_path(const authz::resource_pattern& resource);
// Where a change to `resource`'s ACLs is announced, and what the notification holds.
std::string_view acl_changes_path(authz::pattern_type pattern);
std::string encode_acl_change(const authz::resource_pattern& resource);

// The sequence number of an "acl_changes_0000000042" child of either change path; nullopt for other names.
std::optional<std::int64_t> acl_change_sequence(std::string_view child_name);

// An ACL znode's entries (the resource is in its path).
result<std::vector<authz::acl_entry>> decode_acls(std::string_view json);
std::string encode_acls(const std::vector<authz::acl_entry>& entries);
// A change notification: under /kafka-acl-changes (extended false) or /kafka-acl-extended-changes.
result<authz::resource_pattern> decode_acl_change(std::string_view data, bool extended);

}  // namespace ferry::coord::layout
