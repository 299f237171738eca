#include "kube/api_config.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/log.h"
#include "kube/errc.h"

namespace ferry::kube {
namespace {

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

// An exec credential is run again this long before it expires, and not on a 401 this soon after it was given.
constexpr auto exec_refresh_margin = std::chrono::seconds(10);
// After a failed run, requests go without running the plugin for this long.
constexpr auto exec_retry_delay = std::chrono::seconds(10);

result<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    FERRY_LOG(error, "kube") << "cannot read " << path.string();
    return errc::bad_config;
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

result<std::string> decode_base64(const std::string& text) {
  std::string compact;
  for (const char c : text) {
    if (c != '\n' && c != '\r' && c != ' ') compact += c;
  }
  if (compact.size() % 4 != 0) return errc::bad_config;
  std::string out(compact.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(compact.data()), static_cast<int>(compact.size()));
  if (n < 0) return errc::bad_config;
  std::size_t padding = 0;
  if (compact.ends_with("==")) {
    padding = 2;
  } else if (compact.ends_with("=")) {
    padding = 1;
  }
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

// A field given inline ("<name>-data", base64) or as a file ("<name>"); empty when neither is set.
result<std::string> inline_or_file(const YAML::Node& node, const std::string& name, const fs::path& base) {
  if (const auto data = node[name + "-data"]; data && data.IsScalar()) return decode_base64(data.as<std::string>());
  if (const auto file = node[name]; file && file.IsScalar()) {
    const fs::path path(file.as<std::string>());
    return read_file(path.is_absolute() ? path : base / path);
  }
  return std::string{};
}

YAML::Node named_entry(const YAML::Node& list, const std::string& name, const char* field) {
  if (!list || !list.IsSequence()) return {};
  for (const auto& entry : list) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry[field];
  }
  return {};
}

result<void> set_server(api_config& config, const std::string& server) {
  constexpr std::string_view scheme = "https://";
  if (!server.starts_with(scheme)) {
    FERRY_LOG(error, "kube") << "kubeconfig server '" << server << "' is not an https:// URL";
    return errc::bad_config;
  }
  std::string rest = server.substr(scheme.size());
  if (const auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  const auto colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    config.host = rest.substr(0, colon);
    config.port = rest.substr(colon + 1);
  } else {
    config.host = rest;
  }
  if (config.host.starts_with('[') && config.host.ends_with(']'))
    config.host = config.host.substr(1, config.host.size() - 2);
  return success();
}

result<exec_plugin> parse_exec(const YAML::Node& exec, const std::string& user, const fs::path& base) {
  const auto refuse = [&user](const std::string& why) -> result<exec_plugin> {
    FERRY_LOG(error, "kube") << "kubeconfig user '" << user << "': exec " << why;
    return errc::bad_config;
  };
  exec_plugin plugin{.user = user,
                     .api_version = exec["apiVersion"].as<std::string>(""),
                     .command = exec["command"].as<std::string>(""),
                     .install_hint = exec["installHint"].as<std::string>("")};
  if (plugin.api_version != "client.authentication.k8s.io/v1" &&
      plugin.api_version != "client.authentication.k8s.io/v1beta1") {
    return refuse("apiVersion '" + plugin.api_version +
                  "' is not client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1");
  }
  if (plugin.command.empty()) return refuse("has no command");
  // As kubectl: a relative path (not a bare name looked up in PATH) is relative to the kubeconfig.
  if (const fs::path command(plugin.command); command.is_relative() && plugin.command.find('/') != std::string::npos)
    plugin.command = (base / command).string();
  if (exec["interactiveMode"].as<std::string>("") == "Always")
    return refuse("interactiveMode is Always: the operator has no terminal to give the plugin");
  for (const auto& arg : exec["args"]) plugin.args.push_back(arg.as<std::string>());
  for (const auto& var : exec["env"]) {
    if (!var["name"]) return refuse("env has an entry without a name");
    plugin.env.emplace_back(var["name"].as<std::string>(), var["value"].as<std::string>(""));
  }
  return plugin;
}

result<api_config> parse_kubeconfig(const YAML::Node& root, const fs::path& base) {
  const auto context_name = root["current-context"] ? root["current-context"].as<std::string>() : std::string{};
  const auto context = named_entry(root["contexts"], context_name, "context");
  if (!context) {
    FERRY_LOG(error, "kube") << "kubeconfig has no context named '" << context_name << "' (current-context)";
    return errc::bad_config;
  }
  const auto cluster = named_entry(root["clusters"], context["cluster"].as<std::string>(""), "cluster");
  if (!cluster || !cluster["server"]) {
    FERRY_LOG(error, "kube") << "kubeconfig context '" << context_name << "' names no cluster with a server";
    return errc::bad_config;
  }
  api_config config;
  FERRY_TRY(set_server(config, cluster["server"].as<std::string>()));
  FERRY_TRY(config.ca_pem, inline_or_file(cluster, "certificate-authority", base));
  config.insecure_skip_verify = cluster["insecure-skip-tls-verify"].as<bool>(false);
  const auto user_name = context["user"].as<std::string>("");
  if (const auto user = named_entry(root["users"], user_name, "user")) {
    FERRY_TRY(config.client_cert_pem, inline_or_file(user, "client-certificate", base));
    FERRY_TRY(config.client_key_pem, inline_or_file(user, "client-key", base));
    config.token = user["token"].as<std::string>("");
    if (const auto file = user["tokenFile"]) {
      const fs::path path(file.as<std::string>());
      config.token_file = (path.is_absolute() ? path : base / path).string();
    }
    if (const auto exec = user["exec"]) {
      FERRY_TRY(config.exec, parse_exec(exec, user_name, base));
    }
  }
  return config;
}

}  // namespace

result<api_config> load_kubeconfig(const std::string& path) {
  FERRY_TRY(const auto text, read_file(path));
  try {
    return parse_kubeconfig(YAML::Load(text), fs::absolute(path).parent_path());
  } catch (const YAML::Exception& e) {
    FERRY_LOG(error, "kube") << "kubeconfig " << path << " is malformed: " << e.what();
    return errc::bad_config;
  }
}

result<api_config> in_cluster_config(const std::string& account_dir) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read at startup, before any other thread runs
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");  // NOLINT(concurrency-mt-unsafe): as above
  if (host == nullptr || port == nullptr) {
    FERRY_LOG(error, "kube") << "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset";
    return errc::bad_config;
  }
  api_config config;
  config.host = host;
  config.port = port;
  const fs::path dir(account_dir);
  FERRY_TRY(config.ca_pem, read_file(dir / "ca.crt"));
  config.token_file = (dir / "token").string();
  return config;
}

bool token_source::refresh() {
  std::lock_guard lock(mutex_);
  return refresh_locked();
}

bool token_source::refresh_locked() {
  if (!exec_) return true;
  if (credential_ &&
      (!credential_->expires || std::chrono::system_clock::now() + exec_refresh_margin < *credential_->expires)) {
    return true;
  }
  if (steady::now() < retry_after_) return false;
  auto fresh = run_exec_plugin(*exec_);  // logs why it failed
  if (!fresh) {
    retry_after_ = steady::now() + exec_retry_delay;
    return false;  // an expiring credential stays: the API server may take it a little longer
  }
  credential_ = std::move(fresh).value();
  obtained_ = steady::now();
  certificate_renewed_ = !credential_->client_cert_pem.empty();
  return true;
}

std::string token_source::current() {
  std::lock_guard lock(mutex_);
  if (exec_) {
    refresh_locked();
    return credential_ ? credential_->token : std::string{};
  }
  if (file_.empty()) return token_;
  std::error_code ec;
  const auto modified = fs::last_write_time(file_, ec);
  if (!ec && modified != read_at_) {
    if (auto text = read_file(file_)) {
      token_ = std::move(text).value();
      while (!token_.empty() && (token_.back() == '\n' || token_.back() == '\r')) token_.pop_back();
      read_at_ = modified;
    }
  }
  return token_;
}

std::optional<std::pair<std::string, std::string>> token_source::renewed_certificate() {
  std::lock_guard lock(mutex_);
  refresh_locked();
  if (!certificate_renewed_) return std::nullopt;
  certificate_renewed_ = false;
  return std::pair{credential_->client_cert_pem, credential_->client_key_pem};
}

bool token_source::unauthorized() {
  std::lock_guard lock(mutex_);
  if (!exec_ || !credential_ || steady::now() - obtained_ < exec_refresh_margin) return false;
  credential_.reset();
  return true;
}

}  // namespace ferry::kube
