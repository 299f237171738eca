#include "balance/external_services.h"

#include <charconv>
#include <optional>

#include "base/log.h"
#include "kube/informer.h"

namespace ferry::balance {
namespace {

using json = nlohmann::json;

const std::string* label(const json& labels, std::string_view key) {
  const auto found = labels.find(key);
  return found != labels.end() && found->is_string() ? &found->get_ref<const std::string&>() : nullptr;
}

std::optional<std::int32_t> ordinal_of(const json& labels) {
  const auto* text = label(labels, broker_ordinal_label);
  if (text == nullptr) return std::nullopt;
  std::int32_t value = 0;
  const auto* end = text->data() + text->size();
  const auto [at, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc{} || at != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::vector<std::string> external_services_to_prune(const json& services, std::string_view statefulset,
                                                    std::int32_t replicas) {
  std::vector<std::string> names;
  const auto items = services.find("items");
  if (items == services.end() || !items->is_array()) return names;
  for (const auto& service : *items) {
    const auto metadata = service.is_object() ? service.find("metadata") : service.end();
    if (metadata == service.end() || !metadata->is_object()) continue;
    const auto labels = metadata->find("labels");
    if (labels == metadata->end() || !labels->is_object()) continue;
    const auto* owner = label(*labels, external_for_label);
    const auto ordinal = ordinal_of(*labels);
    const auto name = metadata->find("name");
    if (owner != nullptr && *owner == statefulset && ordinal && *ordinal >= replicas && name != metadata->end() &&
        name->is_string())
      names.push_back(name->get<std::string>());
  }
  return names;
}

bool prune_external_services(kube::api_client& api, const std::string& ns, const std::string& statefulset,
                             std::int32_t replicas) {
  const auto base = "/api/v1/namespaces/" + ns + "/services";
  const auto failed = [&](const std::string& what, const result<kube::http_response>& answer) {
    FERRY_LOG(warn, "balance") << what << ": "
                               << (answer ? "HTTP " + std::to_string(answer.value().status) + " " +
                                                answer.value().body.substr(0, 300)
                                          : answer.error().message());
    return false;
  };
  const auto selector = std::string(external_for_label) + "=" + statefulset;
  const auto listed = api.send(kube::api_client::verb::get, base + "?labelSelector=" + kube::url_encode(selector));
  if (!listed || listed.value().status != 200) return failed("listing the external Services of " + statefulset, listed);
  const auto services = json::parse(listed.value().body, nullptr, false);
  for (const auto& name : external_services_to_prune(services, statefulset, replicas)) {
    const auto answer = api.send(kube::api_client::verb::delete_, std::string(base).append("/").append(name));
    if (answer && answer.value().status == 404) continue;
    if (!answer || (answer.value().status != 200 && answer.value().status != 202))
      return failed(std::string("deleting Service ").append(ns).append("/").append(name), answer);
    FERRY_LOG(info, "balance") << "deleted Service " << ns << "/" << name << ": " << statefulset
                               << " runs no broker at its ordinal any more";
  }
  return true;
}

}  // namespace ferry::balance
