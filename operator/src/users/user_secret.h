#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ferry::users {

// Where applications reach the brokers, written into each User's Secret (--client-bootstrap-servers and
// --client-security-protocol); empty: not written.
struct client_connection {
  std::string bootstrap_servers;
  std::string security_protocol;
};

// The labels of the Secrets the operator writes: the cluster's (ferry.dev/cluster) and this one, "true" (a User's
// name may be longer than a label value; its Secret has its name).
inline constexpr std::string_view user_label = "ferry.dev/user";

// A new password: 32 characters of [A-Za-z0-9] from OpenSSL's generator (190 bits).
std::string generate_password();

// Kafka's client setting for a SCRAM-SHA-512 login, the password quoted as Java's JAAS parser reads it.
std::string sasl_jaas_config(std::string_view user, std::string_view password);

// The Secret named after `user` (a User resource) in its namespace, owned by it (deleted with it), with `password`,
// a ready `sasl.jaas.config`, `sasl.mechanism`, the connection's settings when known, and `ca.crt` (the CA
// certificates the brokers' certificates are checked against) unless `ca` is empty.
nlohmann::json user_secret(const nlohmann::json& user, std::string_view cluster, std::string_view password,
                           const client_connection& connection, std::string_view ca);

// The Secret of a User with a client certificate: `tls.crt`, `tls.key` (PEM) and `ca.crt`.
nlohmann::json user_tls_secret(const nlohmann::json& user, std::string_view cluster, std::string_view certificate,
                               std::string_view key, std::string_view ca);

// A Secret's data[key], decoded; nullopt when it has none or it is not base64.
std::optional<std::string> secret_value(const nlohmann::json& secret, const std::string& key);

// Whether `secret` is the one the operator wrote for `user` (owned by the User of that uid).
bool owned_by(const nlohmann::json& secret, const nlohmann::json& user);

// Whether `secret` already has what `wanted` (a user_secret) sets: its data and labels.
bool matches(const nlohmann::json& secret, const nlohmann::json& wanted);

}  // namespace ferry::users
