#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ferry::registry {

// What the registry's HTTP listener hands the registry: the request after authentication.
struct registry_request {
  std::string method;
  std::string target;  // path and query, as sent
  std::string body;
  std::string principal;   // empty when the listener authenticates nobody
  bool forwarded = false;  // another broker forwarded it (it is never forwarded again)
};

inline constexpr std::string_view content_type = "application/vnd.schemaregistry.v1+json";

struct registry_reply {
  int status = 200;
  std::string body;
};

// Confluent's error codes (rest/exceptions/Errors.java); the HTTP status is the code's first three digits.
namespace error_codes {
inline constexpr int subject_not_found = 40401;
inline constexpr int version_not_found = 40402;
inline constexpr int schema_not_found = 40403;
inline constexpr int subject_soft_deleted = 40404;
inline constexpr int subject_not_soft_deleted = 40405;
inline constexpr int version_soft_deleted = 40406;
inline constexpr int version_not_soft_deleted = 40407;
inline constexpr int subject_level_compatibility_not_configured = 40408;
inline constexpr int subject_level_mode_not_configured = 40409;
inline constexpr int incompatible_schema = 409;
inline constexpr int invalid_schema = 42201;
inline constexpr int invalid_version = 42202;
inline constexpr int invalid_compatibility_level = 42203;
inline constexpr int invalid_mode = 42204;
inline constexpr int operation_not_permitted = 42205;
inline constexpr int reference_exists = 42206;
inline constexpr int id_mismatch = 42207;
inline constexpr int invalid_subject = 42208;
inline constexpr int store_error = 50001;
inline constexpr int timeout = 50002;
inline constexpr int forwarding_failed = 50003;
inline constexpr int unknown_leader = 50004;
}  // namespace error_codes

// {"error_code": code, "message": message}, with the status the code implies (or `status` for the plain
// HTTP errors: 400, 401, 403, 404, 405, 413, 415).
registry_reply error_reply(int code, const std::string& message);
registry_reply json_reply(const nlohmann::json& body, int status = 200);

// A request target split into decoded path segments and query parameters.
struct request_target {
  std::vector<std::string> segments;
  std::map<std::string, std::string> query;
  [[nodiscard]] bool flag(const std::string& name) const;  // ?name=true
  [[nodiscard]] std::optional<std::string> param(const std::string& name) const;
};
// nullopt when a %-escape is malformed.
std::optional<request_target> parse_target(std::string_view target);

}  // namespace ferry::registry
