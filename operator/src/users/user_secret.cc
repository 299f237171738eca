#include "users/user_secret.h"

#include "security/scram_credential.h"

namespace ferry::users {
namespace {

using json = nlohmann::json;

constexpr std::size_t password_length = 32;
constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

}  // namespace

std::string generate_password() {
  std::string password;
  // Bytes beyond the largest multiple of the alphabet's size are drawn again, so every character is as likely.
  constexpr auto usable = 256 - 256 % alphabet.size();
  while (password.size() < password_length) {
    for (const char byte : security::random_bytes(password_length)) {
      const auto value = static_cast<unsigned char>(byte);
      if (value < usable && password.size() < password_length) password += alphabet[value % alphabet.size()];
    }
  }
  return password;
}

std::string sasl_jaas_config(std::string_view user, std::string_view password) {
  return "org.apache.kafka.common.security.scram.ScramLoginModule required username=" + quoted(user) +
         " password=" + quoted(password) + ";";
}

namespace {

// The Secret named after `user` in its namespace, owned by it (deleted with it), with `data` (base64 already).
json secret_of(const json& user, std::string_view cluster, json data) {
  const auto& meta = user["metadata"];
  const auto name = meta.value("name", std::string{});
  return {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"type", "Opaque"},
      {"metadata",
       {{"name", name},
        {"namespace", meta.value("namespace", std::string{})},
        {"labels",
         {{"ferry.dev/cluster", cluster}, {user_label, "true"}, {"app.kubernetes.io/managed-by", "ferry-operator"}}},
        {"ownerReferences", json::array({{{"apiVersion", "ferry.dev/v1alpha1"},
                                          {"kind", "User"},
                                          {"name", name},
                                          {"uid", meta.value("uid", std::string{})},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})}}},
      {"data", std::move(data)}};
}

}  // namespace

json user_secret(const json& user, std::string_view cluster, std::string_view password,
                 const client_connection& connection, std::string_view ca) {
  const auto name = user["metadata"].value("name", std::string{});
  json data{{"password", security::base64_encode(password)},
            {"sasl.jaas.config", security::base64_encode(sasl_jaas_config(name, password))},
            {"sasl.mechanism", security::base64_encode("SCRAM-SHA-512")}};
  if (!connection.bootstrap_servers.empty())
    data["bootstrap.servers"] = security::base64_encode(connection.bootstrap_servers);
  if (!connection.security_protocol.empty())
    data["security.protocol"] = security::base64_encode(connection.security_protocol);
  if (!ca.empty()) data["ca.crt"] = security::base64_encode(ca);
  return secret_of(user, cluster, std::move(data));
}

json user_tls_secret(const json& user, std::string_view cluster, std::string_view certificate, std::string_view key,
                     std::string_view ca) {
  return secret_of(user, cluster,
                   {{"tls.crt", security::base64_encode(certificate)},
                    {"tls.key", security::base64_encode(key)},
                    {"ca.crt", security::base64_encode(ca)}});
}

std::optional<std::string> secret_value(const json& secret, const std::string& key) {
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return std::nullopt;
  const auto value = data->find(key);
  if (value == data->end() || !value->is_string()) return std::nullopt;
  return security::base64_decode(value->get<std::string>());
}

bool owned_by(const json& secret, const json& user) {
  const auto uid = user["metadata"].value("uid", std::string{});
  const auto meta = secret.find("metadata");
  if (meta == secret.end() || !meta->is_object()) return false;
  const auto owners = meta->find("ownerReferences");
  if (owners == meta->end() || !owners->is_array()) return false;
  for (const auto& owner : *owners) {
    if (owner.is_object() && owner.value("kind", "") == "User" && owner.value("uid", "") == uid) return true;
  }
  return false;
}

bool matches(const json& secret, const json& wanted) {
  if (secret.value("data", json::object()) != wanted["data"]) return false;
  const auto labels = secret["metadata"].value("labels", json::object());
  for (const auto& [key, value] : wanted["metadata"]["labels"].items()) {
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  return true;
}

}  // namespace ferry::users
