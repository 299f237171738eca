#pragma once

#include <system_error>

namespace ferry::kube {

// Why a call to the Kubernetes API failed before an HTTP status could say so. An answer with a status
// (404, 409, 410, ...) is not an error at this level: callers read http_response::status.
enum class errc {
  bad_config = 1,  // kubeconfig or in-cluster files missing or malformed
  bad_response,    // the API server's answer was not the JSON expected
  stopped,         // the client is shutting down
  timeout,         // no answer in time
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::kube

template <>
struct std::is_error_code_enum<ferry::kube::errc> : std::true_type {};
