#include "coord/acl_layout.h"

#include <nlohmann/json.hpp>

#include "coord/errc.h"

namespace ferry::coord::layout {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// The string at `key` of an object, or nothing.
std::optional<std::string> string_at(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

bool is_version_1(const json& object) {
  const auto it = object.find("version");
  return it != object.end() && it->is_number_integer() && it->get<std::int64_t>() == 1;
}

// Names and principals come from clients: bytes that are not UTF-8 are written as U+FFFD, as Kafka's Java
// strings hold them, instead of failing the write.
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

bool stored(authz::resource_type t) { return t >= authz::resource_type::topic && t <= authz::resource_type::user; }

}  // namespace

std::string acl_type_path(authz::resource_type type, authz::pattern_type pattern) {
  const auto root = pattern == authz::pattern_type::prefixed ? prefixed_acls_path : literal_acls_path;
  return std::string(root) + "/" + std::string(authz::name_of(type));
}

std::string acl_path(const authz::resource_pattern& resource) {
  return acl_type_path(resource.type, resource.pattern) + "/" + resource.name;
}

std::string_view acl_changes_path(authz::pattern_type pattern) {
  return pattern == authz::pattern_type::prefixed ? extended_acl_changes_path : literal_acl_changes_path;
}

std::string encode_acl_change(const authz::resource_pattern& resource) {
  if (resource.pattern != authz::pattern_type::prefixed)
    return std::string(authz::enum_name_of(resource.type)) + ":" + resource.name;
  ordered_json j;
  j["version"] = 1;
  j["resourceType"] = authz::enum_name_of(resource.type);
  j["name"] = resource.name;
  j["patternType"] = authz::name_of(resource.pattern);
  return dump(j);
}

result<std::vector<authz::acl_entry>> decode_acls(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !is_version_1(j)) return errc::invalid_data;
  const auto acls = j.find("acls");
  if (acls == j.end() || !acls->is_array()) return errc::invalid_data;
  std::vector<authz::acl_entry> out;
  for (const auto& item : *acls) {
    if (!item.is_object()) return errc::invalid_data;
    auto principal = string_at(item, "principal");
    auto host = string_at(item, "host");
    const auto op = string_at(item, "operation");
    const auto perm = string_at(item, "permissionType");
    if (!principal || !host || !op || !perm) return errc::invalid_data;
    const auto parsed_op = authz::parse_operation(*op);
    const auto parsed_perm = authz::parse_permission(*perm);
    if (!parsed_op || !parsed_perm || *parsed_op == authz::operation::any || *parsed_perm == authz::permission::any)
      return errc::invalid_data;
    out.push_back({std::move(*principal), std::move(*host), *parsed_op, *parsed_perm});
  }
  return out;
}

std::string encode_acls(const std::vector<authz::acl_entry>& entries) {
  ordered_json acls = ordered_json::array();
  for (const auto& e : entries) {
    ordered_json item;
    item["principal"] = e.principal;
    item["permissionType"] = authz::name_of(e.perm);
    item["operation"] = authz::name_of(e.op);
    item["host"] = e.host;
    acls.push_back(std::move(item));
  }
  ordered_json j;
  j["version"] = 1;
  j["acls"] = std::move(acls);
  return dump(j);
}

result<authz::resource_pattern> decode_acl_change(std::string_view data, bool extended) {
  if (!extended) {
    const auto colon = data.find(':');
    if (colon == std::string_view::npos) return errc::invalid_data;
    const auto type = authz::parse_resource_type(data.substr(0, colon));
    if (!type || !stored(*type) || colon + 1 == data.size()) return errc::invalid_data;
    return authz::resource_pattern{*type, std::string(data.substr(colon + 1)), authz::pattern_type::literal};
  }
  const json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !is_version_1(j)) return errc::invalid_data;
  const auto type_name = string_at(j, "resourceType");
  auto name = string_at(j, "name");
  const auto pattern_name = string_at(j, "patternType");
  if (!type_name || !name || !pattern_name || name->empty()) return errc::invalid_data;
  const auto type = authz::parse_resource_type(*type_name);
  const auto pattern = authz::parse_pattern_type(*pattern_name);
  if (!type || !stored(*type) || !pattern ||
      (*pattern != authz::pattern_type::literal && *pattern != authz::pattern_type::prefixed))
    return errc::invalid_data;
  return authz::resource_pattern{*type, std::move(*name), *pattern};
}

}  // namespace ferry::coord::layout
