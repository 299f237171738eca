#include "certs/kept_secret.h"

#include "security/scram_credential.h"

namespace ferry::certs {
namespace {

using json = nlohmann::json;

constexpr const char* managed_by = "app.kubernetes.io/managed-by";
constexpr const char* operator_name = "ferry-operator";

std::string failed(const char* what, const kept_secret& secret, const result<kube::http_response>& answer) {
  return std::string("cannot ") + what + " " + secret.where() + ": " +
         (answer ? "HTTP " + std::to_string(answer.value().status) : answer.error().message());
}

}  // namespace

std::optional<std::string> kept_secret::value(const std::string& key) const {
  if (!exists()) return std::nullopt;
  const auto data = object.find("data");
  if (data == object.end() || !data->is_object()) return std::nullopt;
  const auto found = data->find(key);
  if (found == data->end() || !found->is_string()) return std::nullopt;
  return security::base64_decode(found->get<std::string>());
}

std::string kept_secret::annotation(const std::string& key) const {
  if (!exists()) return {};
  const auto annotations = object["metadata"].value("annotations", json::object());
  return annotations.is_object() ? annotations.value(key, std::string{}) : std::string{};
}

bool kept_secret::operator_made() const {
  if (!exists()) return false;
  const auto labels = object["metadata"].value("labels", json::object());
  return labels.is_object() && labels.value(managed_by, std::string{}) == operator_name;
}

std::variant<kept_secret, std::string> read_secret(kube::api_client& api, const std::string& ns,
                                                   const std::string& name) {
  kept_secret secret{ns, name, nullptr};
  const auto found = api.send(kube::api_client::verb::get, "/api/v1/namespaces/" + ns + "/secrets/" + name);
  if (!found) return failed("read", secret, found);
  if (found.value().status == 404) return secret;
  if (found.value().status != 200) return failed("read", secret, found);
  secret.object = json::parse(found.value().body, nullptr, false);
  if (!secret.exists()) return "cannot read " + secret.where() + ": the API server's answer is not a Secret";
  return secret;
}

std::variant<bool, std::string> write_secret(kube::api_client& api, const kept_secret& secret,
                                             const std::map<std::string, std::string>& data,
                                             const std::map<std::string, std::string>& annotations) {
  if (secret.exists() && !secret.operator_made())
    return secret.where() + " exists and was not made by the operator: delete it, or name another";
  bool same = secret.exists() && secret.object.value("data", json::object()).size() == data.size();
  for (const auto& [key, value] : data) same = same && secret.value(key) == value;
  for (const auto& [key, value] : annotations) same = same && secret.annotation(key) == value;
  if (same) return false;

  json encoded = json::object();
  for (const auto& [key, value] : data) encoded[key] = security::base64_encode(value);
  json annotated = json::object();  // an empty value removes the annotation
  for (const auto& [key, value] : annotations)
    if (!value.empty()) annotated[key] = value;
  const auto collection = "/api/v1/namespaces/" + secret.ns + "/secrets";
  if (!secret.exists()) {
    const json created{{"apiVersion", "v1"},
                       {"kind", "Secret"},
                       {"type", "Opaque"},
                       {"metadata",
                        {{"name", secret.name},
                         {"namespace", secret.ns},
                         {"labels", {{managed_by, operator_name}}},
                         {"annotations", annotated}}},
                       {"data", encoded}};
    const auto answer = api.send(kube::api_client::verb::post, collection, created.dump());
    if (!answer || answer.value().status != 201) return failed("create", secret, answer);
    return true;
  }
  auto replaced = secret.object;
  replaced["data"] = encoded;
  auto& kept = replaced["metadata"]["annotations"];
  if (!kept.is_object()) kept = json::object();
  for (const auto& [key, value] : annotations) kept.erase(key);
  kept.update(annotated);
  const auto answer = api.send(kube::api_client::verb::put, collection + "/" + secret.name, replaced.dump());
  if (!answer || answer.value().status != 200) return failed("update", secret, answer);
  return true;
}

}  // namespace ferry::certs
