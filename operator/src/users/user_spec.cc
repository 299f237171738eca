#include "users/user_spec.h"

#include <algorithm>
#include <cmath>

#include <boost/asio/ip/address.hpp>

#include "net/host_address.h"
#include "quota/quota_config.h"

namespace ferry::users {
namespace {

using json = nlohmann::json;
using failure = std::string;

// The spec's resource types and pattern types (Strimzi's names) and Kafka's.
std::optional<authz::resource_type> resource_type_named(std::string_view name) {
  if (name == "topic") return authz::resource_type::topic;
  if (name == "group") return authz::resource_type::group;
  if (name == "cluster") return authz::resource_type::cluster;
  if (name == "transactionalId") return authz::resource_type::transactional_id;
  return std::nullopt;
}

std::string_view spec_name_of(authz::resource_type t) {
  switch (t) {
    case authz::resource_type::topic:
      return "topic";
    case authz::resource_type::group:
      return "group";
    case authz::resource_type::cluster:
      return "cluster";
    case authz::resource_type::transactional_id:
      return "transactionalId";
    default:
      return authz::name_of(t);
  }
}

// The spec's quota fields and Kafka's keys.
struct quota_field {
  const char* field;
  quota::quota_key key;
};
constexpr quota_field quota_fields[] = {
    {"producerByteRate", quota::quota_key::producer_byte_rate},
    {"consumerByteRate", quota::quota_key::consumer_byte_rate},
    {"requestPercentage", quota::quota_key::request_percentage},
    {"controllerMutationRate", quota::quota_key::controller_mutation_rate},
};

std::string string_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// One entry of spec.authorization.acls: an ACL per operation, or why not.
std::variant<std::vector<authz::acl_binding>, failure> read_acl(const json& entry, const std::string& principal,
                                                                const std::string& where) {
  if (!entry.is_object()) return where + ": must be an object";
  const auto resource = entry.find("resource");
  if (resource == entry.end() || !resource->is_object()) return where + ".resource: required";
  authz::resource_pattern pattern;
  const auto type_name = string_at(*resource, "type");
  const auto type = resource_type_named(type_name);
  if (!type) return where + ".resource.type " + type_name + ": must be topic, group, cluster or transactionalId";
  pattern.type = *type;
  pattern.name =
      *type == authz::resource_type::cluster ? std::string(authz::cluster_name) : string_at(*resource, "name");
  const auto pattern_name = resource->contains("patternType") ? string_at(*resource, "patternType") : "literal";
  if (pattern_name == "prefix") {
    pattern.pattern = authz::pattern_type::prefixed;
  } else if (pattern_name != "literal") {
    return where + ".resource.patternType " + pattern_name + ": must be literal or prefix";
  }
  if (pattern.type != authz::resource_type::cluster && pattern.name.empty())
    return where + ".resource.name: required for a " + type_name;
  authz::acl_entry acl;
  acl.principal = principal;
  acl.host = entry.contains("host") ? string_at(entry, "host") : std::string(authz::wildcard);
  if (acl.host != authz::wildcard) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(acl.host, ec);
    if (ec) return where + ".host " + acl.host + ": must be an IP address or *";
    acl.host = net::java_host_address(address);
  }
  const auto permission = entry.contains("type") ? string_at(entry, "type") : std::string("allow");
  if (permission != "allow" && permission != "deny") return where + ".type " + permission + ": must be allow or deny";
  acl.perm = permission == "allow" ? authz::permission::allow : authz::permission::deny;
  const auto operations = entry.find("operations");
  if (operations == entry.end() || !operations->is_array() || operations->empty())
    return where + ".operations: at least one is required";
  std::vector<authz::acl_binding> bindings;
  for (const auto& op : *operations) {
    const auto name = op.is_string() ? op.get<std::string>() : op.dump();
    const auto parsed = authz::parse_operation(name);
    if (!parsed || *parsed == authz::operation::any || *parsed == authz::operation::unknown)
      return where + ".operations: " + (name + " is not one of Kafka's operations");
    acl.op = *parsed;
    authz::acl_binding binding{pattern, acl};
    if (const auto why = authz::invalid_reason(binding)) return where + ": " + *why;
    bindings.push_back(std::move(binding));
  }
  return bindings;
}

}  // namespace

std::string user_spec::principal() const { return auth == authentication::tls ? "User:CN=" + name : "User:" + name; }

std::variant<user_spec, std::string> read_user_spec(const json& resource) {
  user_spec spec;
  static const json empty = json::object();
  const auto meta = resource.find("metadata");
  spec.name = meta != resource.end() && meta->is_object() ? string_at(*meta, "name") : std::string{};
  const auto body_at = resource.find("spec");
  const auto& body = body_at != resource.end() && body_at->is_object() ? *body_at : empty;

  if (const auto auth = body.find("authentication"); auth != body.end() && auth->is_object()) {
    const auto type = string_at(*auth, "type");
    if (type == "scram-sha-512") {
      spec.auth = authentication::scram_sha_512;
    } else if (type == "tls") {
      spec.auth = authentication::tls;
    } else {
      return "spec.authentication.type " + type + ": must be scram-sha-512 or tls";
    }
    if (const auto password = auth->find("password"); password != auth->end()) {
      if (spec.auth != authentication::scram_sha_512)
        return std::string("spec.authentication.password: only for scram-sha-512");
      static const json::json_pointer ref_at("/valueFrom/secretKeyRef");
      const auto ref = password->is_object() && password->contains(ref_at) ? password->at(ref_at) : json::object();
      secret_key_ref key{string_at(ref, "name"), string_at(ref, "key")};
      if (key.name.empty() || key.key.empty())
        return std::string("spec.authentication.password.valueFrom.secretKeyRef: needs a name and a key");
      if (key.name == spec.name)
        return "spec.authentication.password.valueFrom.secretKeyRef.name " + key.name +
               ": is the Secret the operator writes for this User; name another one";
      spec.password = std::move(key);
    }
  }

  if (const auto authorization = body.find("authorization");
      authorization != body.end() && authorization->is_object()) {
    const auto type = authorization->contains("type") ? string_at(*authorization, "type") : std::string("simple");
    if (type != "simple") return "spec.authorization.type " + type + ": must be simple (Kafka's ACLs)";
    const auto remove = authorization->find("removeUnmanagedAcls");
    spec.remove_unmanaged_acls = remove != authorization->end() && remove->is_boolean() && remove->get<bool>();
    if (const auto acls = authorization->find("acls"); acls != authorization->end()) {
      if (!acls->is_array()) return std::string("spec.authorization.acls: must be a list");
      const auto principal = spec.principal();
      for (std::size_t i = 0; i < acls->size(); ++i) {
        auto read = read_acl((*acls)[i], principal, "spec.authorization.acls[" + std::to_string(i) + "]");
        if (const auto* why = std::get_if<failure>(&read)) return *why;
        auto& bindings = std::get<std::vector<authz::acl_binding>>(read);
        spec.acls.insert(spec.acls.end(), bindings.begin(), bindings.end());
      }
      std::sort(spec.acls.begin(), spec.acls.end());
      spec.acls.erase(std::unique(spec.acls.begin(), spec.acls.end()), spec.acls.end());
    }
  }

  if (const auto quotas = body.find("quotas"); quotas != body.end() && quotas->is_object()) {
    for (const auto& [field, key] : quota_fields) {
      const auto value = quotas->find(field);
      if (value == quotas->end() || value->is_null()) continue;
      if (!value->is_number()) return std::string("spec.quotas.") + field + ": must be a number";
      const auto number = value->get<double>();
      const auto name = std::string(quota::name_of(key));
      if (const auto refused = quota::check_value(name, number))
        return std::string("spec.quotas.") + field + ": " + refused->message;
      spec.quotas[name] = number;
    }
  }
  return spec;
}

json acl_to_json(const authz::acl_binding& acl) {
  json resource{{"type", spec_name_of(acl.resource.type)},
                {"patternType", acl.resource.pattern == authz::pattern_type::prefixed ? "prefix" : "literal"}};
  if (acl.resource.type != authz::resource_type::cluster) resource["name"] = acl.resource.name;
  return {{"resource", std::move(resource)},
          {"operation", authz::name_of(acl.entry.op)},
          {"host", acl.entry.host},
          {"type", acl.entry.perm == authz::permission::deny ? "deny" : "allow"}};
}

std::optional<authz::acl_binding> acl_from_json(const json& entry, const std::string& principal) {
  if (!entry.is_object()) return std::nullopt;
  json spec_form = entry;
  spec_form["operations"] = json::array({string_at(entry, "operation")});
  auto read = read_acl(spec_form, principal, "");
  auto* bindings = std::get_if<std::vector<authz::acl_binding>>(&read);
  if (bindings == nullptr || bindings->size() != 1) return std::nullopt;
  return bindings->front();
}

}  // namespace ferry::users
