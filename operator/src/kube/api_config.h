#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "base/result.h"
#include "kube/exec_credential.h"

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
  std::optional<exec_plugin> exec;  // a credential plugin that gives a token or a client certificate
};

// The current context of a kubeconfig file (`kubectl`'s format): server, certificate-authority(-data),
// insecure-skip-tls-verify, client-certificate(-data), client-key(-data), token, tokenFile, exec (apiVersion,
// command, args, env, installHint). Relative paths are resolved against the file's directory. errc::bad_config
// names what is missing.
result<api_config> load_kubeconfig(const std::string& path);

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, and the token and CA bundle under `account_dir`.
result<api_config> in_cluster_config(const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// The credentials to send: the bearer token, re-reading token_file when its modification time changes; or
// what the exec plugin gives, cached until shortly before it expires. Thread-safe.
class token_source {
 public:
  explicit token_source(const api_config& config)
      : token_(config.token), file_(config.token_file), exec_(config.exec) {}
  // Runs the exec plugin unless its credential is still good; false when that failed (the plugin's error is
  // logged). True without a plugin.
  bool refresh();
  std::string current();
  // The client certificate and key (PEM) the exec plugin gave, once after each run that gave them.
  std::optional<std::pair<std::string, std::string>> renewed_certificate();
  // After a 401: whether the exec plugin's credential was dropped, to run it again for the next request. Not
  // one it gave moments ago: that is what it gives now.
  bool unauthorized();

 private:
  bool refresh_locked();

  std::mutex mutex_;
  std::string token_;
  std::string file_;
  std::chrono::file_clock::time_point read_at_{};
  std::optional<exec_plugin> exec_;
  std::optional<exec_credential> credential_;
  std::chrono::steady_clock::time_point obtained_{};     // when credential_ was given
  std::chrono::steady_clock::time_point retry_after_{};  // after a failed run
  bool certificate_renewed_ = false;
};

}  // namespace ferry::kube
