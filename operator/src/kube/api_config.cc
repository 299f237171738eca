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
  if (const auto user = named_entry(root["users"], context["user"].as<std::string>(""), "user")) {
    FERRY_TRY(config.client_cert_pem, inline_or_file(user, "client-certificate", base));
    FERRY_TRY(config.client_key_pem, inline_or_file(user, "client-key", base));
    config.token = user["token"].as<std::string>("");
    if (const auto file = user["tokenFile"]) {
      const fs::path path(file.as<std::string>());
      config.token_file = (path.is_absolute() ? path : base / path).string();
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

std::string token_source::current() {
  std::lock_guard lock(mutex_);
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

}  // namespace ferry::kube
