#include "kube/resource_meta.h"

#include "base/log.h"

namespace ferry::kube {
namespace {

using json = nlohmann::json;

std::string metadata_entry(const json& resource, const char* field, std::string_view name) {
  const auto& meta = resource["metadata"];
  if (!meta.contains(field) || !meta[field].is_object()) return {};
  return meta[field].value(std::string(name), std::string{});
}

}  // namespace

std::string annotation(const json& resource, std::string_view name) {
  return metadata_entry(resource, "annotations", name);
}

std::string label(const json& resource, std::string_view name) { return metadata_entry(resource, "labels", name); }

std::string resource_path(const json& resource, std::string_view collection, std::string_view plural) {
  const auto& meta = resource["metadata"];
  std::string path(collection);
  path.append("/namespaces/").append(meta.value("namespace", std::string{})).append("/");
  path.append(plural).append("/").append(meta.value("name", std::string{}));
  return path;
}

bool has_finalizer(const json& resource, std::string_view finalizer) {
  const auto& meta = resource["metadata"];
  if (!meta.contains("finalizers") || !meta["finalizers"].is_array()) return false;
  for (const auto& f : meta["finalizers"]) {
    if (f == finalizer) return true;
  }
  return false;
}

bool add_finalizer(api_client& api, const std::string& path, const json& resource, std::string_view finalizer) {
  const auto& meta = resource["metadata"];
  json patch =
      json::array({{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", meta["resourceVersion"]}}});
  if (meta.contains("finalizers") && meta["finalizers"].is_array()) {
    patch.push_back({{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", finalizer}});
  } else {
    patch.push_back({{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", json::array({finalizer})}});
  }
  const auto answer = api.send(api_client::verb::patch, path, patch.dump(), json_patch);
  return answer && answer.value().status == 200;
}

bool remove_finalizer(api_client& api, const std::string& path, const json& resource, std::string_view finalizer) {
  const auto& finalizers = resource["metadata"]["finalizers"];
  for (std::size_t i = 0; i < finalizers.size(); ++i) {
    if (finalizers[i] != finalizer) continue;
    const auto at = "/metadata/finalizers/" + std::to_string(i);
    const json patch =
        json::array({{{"op", "test"}, {"path", at}, {"value", finalizer}}, {{"op", "remove"}, {"path", at}}});
    const auto answer = api.send(api_client::verb::patch, path, patch.dump(), json_patch);
    return answer && (answer.value().status == 200 || answer.value().status == 404);
  }
  return true;
}

bool write_status(api_client& api, const std::string& path, const json& resource, const json& status,
                  const char* component) {
  if (resource.value("status", json::object()) == status) return true;
  const json patch = {{"status", status}};
  // Messages may quote what a broker answered, which need not be UTF-8.
  const auto body = patch.dump(-1, ' ', false, json::error_handler_t::replace);
  const auto answer = api.send(api_client::verb::patch, path + "/status", body, merge_patch);
  if (!answer || answer.value().status == 404) return answer.has_value();  // deleted meanwhile: nothing to do
  if (answer.value().status != 200) {
    FERRY_LOG(warn, component) << "status of " << path << ": HTTP " << answer.value().status << " "
                               << answer.value().body.substr(0, 300);
    return false;
  }
  return true;
}

}  // namespace ferry::kube
