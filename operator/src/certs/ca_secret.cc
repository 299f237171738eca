#include "certs/ca_secret.h"

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "security/scram_credential.h"

namespace ferry::certs {
namespace {

using json = nlohmann::json;

std::optional<std::string> value_of(const json& secret, const char* key) {
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object() || !data->contains(key) || !(*data)[key].is_string())
    return std::nullopt;
  return security::base64_decode((*data)[key].get<std::string>());
}

}  // namespace

std::variant<certificate_authority, std::string> load_or_create_ca(kube::api_client& api, const std::string& ns,
                                                                   const std::string& name, const std::string& subject,
                                                                   std::chrono::seconds validity) {
  const auto collection = "/api/v1/namespaces/" + ns + "/secrets";
  const auto where = "Secret " + ns + "/" + name;
  const auto found = api.send(kube::api_client::verb::get, collection + "/" + name);
  if (!found) return "cannot read " + where + ": " + found.error().message();
  if (found.value().status == 200) {
    const auto secret = json::parse(found.value().body, nullptr, false);
    const auto certificate = secret.is_object() ? value_of(secret, "ca.crt") : std::nullopt;
    const auto key = secret.is_object() ? value_of(secret, "ca.key") : std::nullopt;
    if (!certificate || !key) return where + ": needs the keys ca.crt and ca.key (PEM)";
    auto ca = certificate_authority::from_pem(*certificate, *key);
    if (!ca) return where + ": " + ca.error();
    return std::move(ca).value();
  }
  if (found.value().status != 404) return "cannot read " + where + ": HTTP " + std::to_string(found.value().status);
  auto ca = certificate_authority::create(subject, validity);
  if (!ca) return ca.error();
  const json secret{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"type", "Opaque"},
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"labels", {{"app.kubernetes.io/managed-by", "ferry-operator"}}}}},
      {"data",
       {{"ca.crt", security::base64_encode(ca.value().certificate_pem())},
        {"ca.key", security::base64_encode(ca.value().key_pem())}}}};
  const auto created = api.send(kube::api_client::verb::post, collection, secret.dump());
  if (!created || created.value().status != 201)
    return "cannot create " + where + ": " +
           (created ? "HTTP " + std::to_string(created.value().status) : created.error().message());
  FERRY_LOG(info, "certs") << "made a new CA (" << subject << ") in " << where;
  return std::move(ca).value();
}

}  // namespace ferry::certs
