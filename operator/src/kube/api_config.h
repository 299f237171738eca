#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "base/result.h"

namespace ferry::kube {

// Where the API server is and how to authenticate to it: from a kubeconfig file (out of the cluster, and in
// tests) or from the pod's service account (in the cluster).
struct api_config {
  std::string host;
  std::string port = "443";
  std::string ca_pem;  // trusted CA bundle; empty: the system's
  bool insecure_skip_verify = false;
  std::string client_cert_pem;  // client certificate authentication
  std::string client_key_pem;
  std::string token;       // a fixed bearer token
  std::string token_file;  // a bearer token read from a file and re-read when it changes (projected tokens rotate)
};

// The current context of a kubeconfig file (`kubectl`'s format): server, certificate-authority(-data),
// insecure-skip-tls-verify, client-certificate(-data), client-key(-data), token, tokenFile. Relative paths
// are resolved against the file's directory. errc::bad_config names what is missing.
result<api_config> load_kubeconfig(const std::string& path);

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, and the token and CA bundle under `account_dir`.
result<api_config> in_cluster_config(const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// The bearer token to send, re-reading token_file when its modification time changes. Thread-safe.
class token_source {
 public:
  explicit token_source(const api_config& config) : token_(config.token), file_(config.token_file) {}
  std::string current();

 private:
  std::mutex mutex_;
  std::string token_;
  std::string file_;
  std::chrono::file_clock::time_point read_at_{};
};

}  // namespace ferry::kube
