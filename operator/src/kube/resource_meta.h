#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace ferry::kube {

// A resource's metadata.annotations[name] or metadata.labels[name]; empty when absent.
std::string annotation(const nlohmann::json& resource, std::string_view name);
std::string label(const nlohmann::json& resource, std::string_view name);

// The API path of a namespaced resource: "<collection>/namespaces/<ns>/<plural>/<name>", with `collection`
// "/apis/ferry.dev/v1alpha1" or "/api/v1".
std::string resource_path(const nlohmann::json& resource, std::string_view collection, std::string_view plural);

// Finalizers by JSON patch at `path` (the resource's own): adding is conditional on the resourceVersion read, so
// a stale cache never adds one twice; removing tests that the entry is still the one at its index. Whether the
// API server took it (a removal from a resource that is gone counts as done).
bool has_finalizer(const nlohmann::json& resource, std::string_view finalizer);
bool add_finalizer(api_client& api, const std::string& path, const nlohmann::json& resource,
                   std::string_view finalizer);
bool remove_finalizer(api_client& api, const std::string& path, const nlohmann::json& resource,
                      std::string_view finalizer);

// Replaces the resource's status (a merge patch of its status subresource at `path` + "/status") unless it is
// `status` already. True when written, unchanged, or the resource is gone; an answer of another kind is logged
// under `component`.
bool write_status(api_client& api, const std::string& path, const nlohmann::json& resource,
                  const nlohmann::json& status, const char* component);

}  // namespace ferry::kube
