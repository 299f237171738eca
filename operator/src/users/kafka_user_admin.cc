#include "users/kafka_user_admin.h"

#include "kafka/errc.h"
#include "protocol/error_code.h"
#include "protocol/messages/alter_client_quotas.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/describe_acls.h"
#include "protocol/messages/describe_client_quotas.h"
#include "protocol/messages/describe_user_scram_credentials.h"
#include "security/scram_credential.h"

namespace ferry::users {
namespace {

namespace p = ferry::protocol;

// Versions Kafka 2.8 and later and Ferry answer.
constexpr std::int16_t describe_acls_version = 1;
constexpr std::int16_t create_acls_version = 1;
constexpr std::int16_t delete_acls_version = 1;
constexpr std::int16_t describe_scram_version = 0;
constexpr std::int16_t alter_scram_version = 0;
constexpr std::int16_t describe_quotas_version = 0;
constexpr std::int16_t alter_quotas_version = 0;
constexpr auto mechanism = security::scram_mechanism::sha512;
constexpr std::size_t salt_bytes = 32;
constexpr std::int8_t exact_match = 0;  // DescribeClientQuotas: the entity named
constexpr std::string_view user_entity = "user";

std::vector<std::byte> bytes_of(std::string_view s) {
  const auto* data = reinterpret_cast<const std::byte*>(s.data());
  return {data, data + s.size()};
}

bool is(std::int16_t code, p::error_code e) { return static_cast<p::error_code>(code) == e; }

}  // namespace

template <typename Response, typename Request>
result<Response> kafka_user_admin::call(const Request& request, std::int16_t version) {
  detail_.clear();
  FERRY_TRY(auto to, client_.any_broker());
  return client_.call<Response>(to, request, version);
}

std::error_code kafka_user_admin::refused(std::int16_t code, const std::optional<std::string>& message) {
  detail_ = message.value_or("");
  return kafka::kafka_error(code);
}

result<bool> kafka_user_admin::has_credential(const std::string& user) {
  p::describe_user_scram_credentials_request request;
  request.users = std::vector<p::describe_user_scram_credentials_request::user_name>{{user}};
  FERRY_TRY(auto answer, call<p::describe_user_scram_credentials_response>(request, describe_scram_version));
  if (answer.error_code != 0) return refused(answer.error_code, answer.error_message);
  for (const auto& found : answer.results) {
    if (found.user != user) continue;
    if (is(found.error_code, p::error_code::resource_not_found)) return false;
    if (found.error_code != 0) return refused(found.error_code, found.error_message);
    for (const auto& info : found.credential_infos) {
      if (info.mechanism == static_cast<std::int8_t>(mechanism)) return true;
    }
  }
  return false;
}

result<void> kafka_user_admin::store_credential(const std::string& user, std::string_view password) {
  const auto salt = security::random_bytes(salt_bytes);
  p::alter_user_scram_credentials_request request;
  request.upsertions.push_back({.name = user,
                                .mechanism = static_cast<std::int8_t>(mechanism),
                                .iterations = security::min_scram_iterations,
                                .salt = bytes_of(salt),
                                .salted_password = bytes_of(security::salted_password(
                                    mechanism, password, salt, security::min_scram_iterations))});
  FERRY_TRY(auto answer, call<p::alter_user_scram_credentials_response>(request, alter_scram_version));
  for (const auto& done : answer.results) {
    if (done.error_code != 0) return refused(done.error_code, done.error_message);
  }
  return success();
}

result<void> kafka_user_admin::delete_credential(const std::string& user) {
  p::alter_user_scram_credentials_request request;
  request.deletions.push_back({.name = user, .mechanism = static_cast<std::int8_t>(mechanism)});
  FERRY_TRY(auto answer, call<p::alter_user_scram_credentials_response>(request, alter_scram_version));
  for (const auto& done : answer.results) {
    if (done.error_code != 0 && !is(done.error_code, p::error_code::resource_not_found))
      return refused(done.error_code, done.error_message);
  }
  return success();
}

result<std::vector<authz::acl_binding>> kafka_user_admin::acls_of(const std::string& principal) {
  p::describe_acls_request request;
  request.resource_type_filter = authz::code_of(authz::resource_type::any);
  request.pattern_type_filter = authz::code_of(authz::pattern_type::any);
  request.principal_filter = principal;
  request.operation = authz::code_of(authz::operation::any);
  request.permission_type = authz::code_of(authz::permission::any);
  FERRY_TRY(auto answer, call<p::describe_acls_response>(request, describe_acls_version));
  if (answer.error_code != 0) return refused(answer.error_code, answer.error_message);
  std::vector<authz::acl_binding> acls;
  for (const auto& resource : answer.resources) {
    const authz::resource_pattern pattern{authz::resource_type_from_code(resource.resource_type),
                                          resource.resource_name, authz::pattern_type_from_code(resource.pattern_type)};
    for (const auto& acl : resource.acls) {
      acls.push_back({pattern,
                      {acl.principal, acl.host, authz::operation_from_code(acl.operation),
                       authz::permission_from_code(acl.permission_type)}});
    }
  }
  return acls;
}

result<void> kafka_user_admin::create_acls(const std::vector<authz::acl_binding>& acls) {
  if (acls.empty()) return success();
  p::create_acls_request request;
  for (const auto& acl : acls) {
    request.creations.push_back({.resource_type = authz::code_of(acl.resource.type),
                                 .resource_name = acl.resource.name,
                                 .resource_pattern_type = authz::code_of(acl.resource.pattern),
                                 .principal = acl.entry.principal,
                                 .host = acl.entry.host,
                                 .operation = authz::code_of(acl.entry.op),
                                 .permission_type = authz::code_of(acl.entry.perm)});
  }
  FERRY_TRY(auto answer, call<p::create_acls_response>(request, create_acls_version));
  if (answer.results.size() != acls.size()) return std::make_error_code(std::errc::protocol_error);
  for (const auto& done : answer.results) {
    if (done.error_code != 0) return refused(done.error_code, done.error_message);
  }
  return success();
}

result<void> kafka_user_admin::delete_acls(const std::vector<authz::acl_binding>& acls) {
  if (acls.empty()) return success();
  p::delete_acls_request request;
  for (const auto& acl : acls) {
    request.filters.push_back({.resource_type_filter = authz::code_of(acl.resource.type),
                               .resource_name_filter = acl.resource.name,
                               .pattern_type_filter = authz::code_of(acl.resource.pattern),
                               .principal_filter = acl.entry.principal,
                               .host_filter = acl.entry.host,
                               .operation = authz::code_of(acl.entry.op),
                               .permission_type = authz::code_of(acl.entry.perm)});
  }
  FERRY_TRY(auto answer, call<p::delete_acls_response>(request, delete_acls_version));
  if (answer.filter_results.size() != acls.size()) return std::make_error_code(std::errc::protocol_error);
  for (const auto& done : answer.filter_results) {
    if (done.error_code != 0) return refused(done.error_code, done.error_message);
  }
  return success();
}

result<std::map<std::string, double>> kafka_user_admin::quotas_of(const std::string& user) {
  p::describe_client_quotas_request request;
  request.components.push_back({.entity_type = std::string(user_entity), .match_type = exact_match, .match = user});
  request.strict = true;
  FERRY_TRY(auto answer, call<p::describe_client_quotas_response>(request, describe_quotas_version));
  if (answer.error_code != 0) return refused(answer.error_code, answer.error_message);
  std::map<std::string, double> quotas;
  for (const auto& entry : answer.entries.value_or(std::vector<p::describe_client_quotas_response::entry_data>{})) {
    for (const auto& value : entry.values) quotas[value.key] = value.value;
  }
  return quotas;
}

result<void> kafka_user_admin::alter_quotas(const std::string& user, const quota_plan& plan) {
  if (plan.empty()) return success();
  p::alter_client_quotas_request request;
  auto& entry = request.entries.emplace_back();
  entry.entity.push_back({.entity_type = std::string(user_entity), .entity_name = user});
  for (const auto& [key, value] : plan.set) entry.ops.push_back({.key = key, .value = value, .remove = false});
  for (const auto& key : plan.remove) entry.ops.push_back({.key = key, .value = 0, .remove = true});
  FERRY_TRY(auto answer, call<p::alter_client_quotas_response>(request, alter_quotas_version));
  for (const auto& done : answer.entries) {
    if (done.error_code != 0) return refused(done.error_code, done.error_message);
  }
  return success();
}

}  // namespace ferry::users
