#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace ferry::kube {

// A kubeconfig user's `exec` section: a credential plugin (client.authentication.k8s.io), as EKS, GKE and AKS
// kubeconfigs use.
struct exec_plugin {
  std::string user;         // the kubeconfig user's name, for errors
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string command;      // a relative path with a slash is resolved against the kubeconfig's directory
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the operator's own environment
  std::string install_hint;
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

// What the plugin printed: a bearer token, or a client certificate and key (PEM), valid until `expires`
// (nullopt: as long as the API server accepts it).
struct exec_credential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expires;
};

// Runs the plugin (no shell; stdin empty, KUBERNETES_EXEC_INFO set as kubectl sets it, with spec.interactive
// false) and reads the ExecCredential it prints. On failure (not found, a non-zero exit, no answer within the
// timeout, an answer that is not an ExecCredential) logs an error naming the user and the command, with the
// plugin's stderr or its installHint, and returns errc::bad_config (errc::timeout for the timeout). Blocking.
result<exec_credential> run_exec_plugin(const exec_plugin& plugin);

}  // namespace ferry::kube
