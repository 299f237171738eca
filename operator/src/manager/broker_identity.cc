#include "manager/broker_identity.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"
#include "kube/api_client.h"
#include "kube/api_config.h"

namespace ferry::manager {
namespace {
namespace asio = boost::asio;

constexpr const char* usage_text =
    "usage: ferry-operator broker-identity --output FILE [--node NAME] [--rack-label LABEL]\n"
    "           [--external-service NAME --external-listener NAME [--advertise NAME://HOST:PORT]...\n"
    "            [--address-type ExternalIP|InternalIP] [--namespace NS] [--wait-seconds N]] [--kubeconfig FILE]\n"
    "\n"
    "Writes FILE as a broker config with the settings of this broker that come from the cluster:\n"
    "  --rack-label LABEL  broker.rack from the node's LABEL (e.g. topology.kubernetes.io/zone); none when the\n"
    "                      node has no such label\n"
    "  --external-service  advertised.listeners: the --advertise listeners, then the external listener at the\n"
    "                      Service's address: for a NodePort the node's address (--address-type, default\n"
    "                      ExternalIP, falling back to InternalIP) and node port; for a LoadBalancer its ingress\n"
    "                      and port, waited for up to --wait-seconds (default 600)\n"
    "NAME defaults to $NODE_NAME and NS to $POD_NAMESPACE; without --kubeconfig the pod's service account is used\n"
    "(it needs 'get' on nodes and on services).\n";

struct options {
  std::string output;
  std::string node;
  std::string rack_label;
  std::string external_service;
  std::string external_listener;
  std::vector<std::string> advertise;
  std::string address_type = "ExternalIP";
  std::string namespace_name;
  std::string wait_seconds = "600";
  std::string kubeconfig;
};

bool fail_usage(const std::string& why) {
  std::cerr << "ferry-operator broker-identity: error: " << why << "\n" << usage_text;
  return false;
}

bool parse(const std::vector<std::string>& args, options& o) {
  // NOLINTBEGIN(concurrency-mt-unsafe): read before any other thread runs
  if (const char* node = std::getenv("NODE_NAME"); node != nullptr) o.node = node;
  if (const char* ns = std::getenv("POD_NAMESPACE"); ns != nullptr) o.namespace_name = ns;
  // NOLINTEND(concurrency-mt-unsafe)
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& flag = args[i];
    if (i + 1 == args.size()) return fail_usage("unexpected argument '" + flag + "'");
    if (flag == "--advertise") {
      o.advertise.push_back(args[++i]);
      continue;
    }
    std::string* target = flag == "--output"              ? &o.output
                          : flag == "--node"              ? &o.node
                          : flag == "--rack-label"        ? &o.rack_label
                          : flag == "--external-service"  ? &o.external_service
                          : flag == "--external-listener" ? &o.external_listener
                          : flag == "--address-type"      ? &o.address_type
                          : flag == "--namespace"         ? &o.namespace_name
                          : flag == "--wait-seconds"      ? &o.wait_seconds
                          : flag == "--kubeconfig"        ? &o.kubeconfig
                                                          : nullptr;
    if (target == nullptr) return fail_usage("unexpected argument '" + flag + "'");
    *target = args[++i];
  }
  if (o.output.empty() || o.node.empty()) return fail_usage("--output and --node (or $NODE_NAME) are required");
  if (o.external_service.empty() != o.external_listener.empty())
    return fail_usage("--external-service and --external-listener go together");
  if (!o.external_service.empty() && o.namespace_name.empty())
    return fail_usage("--namespace (or $POD_NAMESPACE) is required with --external-service");
  if (o.address_type != "ExternalIP" && o.address_type != "InternalIP")
    return fail_usage("--address-type must be ExternalIP or InternalIP, not '" + o.address_type + "'");
  if (o.wait_seconds.empty() || o.wait_seconds.find_first_not_of("0123456789") != std::string::npos ||
      o.wait_seconds.size() > 6)
    return fail_usage("--wait-seconds must be a number of seconds, not '" + o.wait_seconds + "'");
  return true;
}

// GETs `path` as JSON; null (after logging why) when it cannot be read.
nlohmann::json get_object(asio::io_context& io, kube::api_client& client, const std::string& path) {
  std::optional<result<kube::http_response>> response;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { response = co_await client.async_send(kube::api_client::verb::get, path); },
      asio::detached);
  io.restart();
  io.run();
  if (!response || !*response) {
    FERRY_LOG(error, "broker-identity") << "cannot reach the API server to read " << path;
    return nullptr;
  }
  const auto& answer = response->value();
  if (answer.status != 200) {
    FERRY_LOG(error, "broker-identity") << "reading " << path << " failed with HTTP " << answer.status << ": "
                                        << answer.body.substr(0, 300);
    return nullptr;
  }
  auto object = nlohmann::json::parse(answer.body, nullptr, false);
  if (object.is_discarded() || !object.is_object()) {
    FERRY_LOG(error, "broker-identity") << path << " came back as malformed JSON";
    return nullptr;
  }
  return object;
}

bool write_atomically(const std::string& path, const std::string& content) {
  const auto temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << content;
    if (!out.flush()) {
      FERRY_LOG(error, "broker-identity") << "cannot write " << temporary;
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    FERRY_LOG(error, "broker-identity") << "cannot write " << path << ": " << ec.message();
    return false;
  }
  return true;
}

std::string string_at(const nlohmann::json& j, const nlohmann::json::json_pointer& where) {
  const auto value = j.value(where, nlohmann::json());
  return value.is_string() ? value.get<std::string>() : std::string();
}

std::string node_address(const nlohmann::json& node, const std::string& type) {
  const auto addresses = node.value("/status/addresses"_json_pointer, nlohmann::json::array());
  if (!addresses.is_array()) return {};
  for (const auto& a : addresses)
    if (a.is_object() && a.value("type", "") == type && !a.value("address", "").empty()) return a.value("address", "");
  return {};
}

}  // namespace

std::string rack_setting(const nlohmann::json& node, const std::string& label) {
  const auto labels = node.value("/metadata/labels"_json_pointer, nlohmann::json::object());
  const auto value = labels.find(label);
  if (value == labels.end() || !value->is_string() || value->get<std::string>().empty()) return {};
  // A JSON string is a YAML scalar, whatever characters the label value holds.
  return "broker.rack: " + value->dump() + "\n";
}

std::string external_address(const nlohmann::json& service, const nlohmann::json& node,
                             const std::string& address_type) {
  const auto ports = service.value("/spec/ports"_json_pointer, nlohmann::json::array());
  if (!ports.is_array() || ports.empty() || !ports[0].is_object()) return {};
  const auto type = string_at(service, "/spec/type"_json_pointer);
  if (type == "NodePort") {
    auto host = node_address(node, address_type);
    if (host.empty() && address_type == "ExternalIP") host = node_address(node, "InternalIP");
    const auto port = ports[0].value("nodePort", 0);
    if (host.empty() || port <= 0) return {};
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
  if (type == "LoadBalancer") {
    const auto ingress = service.value("/status/loadBalancer/ingress"_json_pointer, nlohmann::json::array());
    if (!ingress.is_array() || ingress.empty() || !ingress[0].is_object()) return {};
    auto host = ingress[0].value("ip", "");
    if (host.empty()) host = ingress[0].value("hostname", "");
    const auto port = ports[0].value("port", 0);
    if (host.empty() || port <= 0) return {};
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
  return {};
}

std::string advertised_setting(const std::vector<std::string>& fixed, const std::string& name,
                               const std::string& address) {
  std::string listeners;
  for (const auto& f : fixed) listeners += f + ",";
  listeners += name + "://" + address;
  return "advertised.listeners: " + nlohmann::json(listeners).dump() + "\n";
}

int run_broker_identity(const std::vector<std::string>& args) {
  options o;
  if (!parse(args, o)) return 2;
  auto config = o.kubeconfig.empty() ? kube::in_cluster_config() : kube::load_kubeconfig(o.kubeconfig);
  if (!config) return 1;
  asio::io_context io;
  auto api = kube::api_client::create(io, config.value());
  if (!api) return 1;
  auto& client = *api.value();

  const auto node = get_object(io, client, "/api/v1/nodes/" + o.node);
  if (node.is_null()) return 1;
  std::string content;
  if (!o.rack_label.empty()) {
    content += rack_setting(node, o.rack_label);
    if (content.empty())
      FERRY_LOG(warn, "broker-identity") << "node " << o.node << " has no label " << o.rack_label
                                         << ": the broker runs without a rack";
  }
  if (!o.external_service.empty()) {
    const auto path = "/api/v1/namespaces/" + o.namespace_name + "/services/" + o.external_service;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::stoi(o.wait_seconds));
    std::string address;
    for (int attempt = 0;; ++attempt) {
      const auto service = get_object(io, client, path);
      if (!service.is_null()) address = external_address(service, node, o.address_type);
      if (!address.empty()) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        FERRY_LOG(error, "broker-identity")
            << "service " << o.external_service << " has no external address after " << o.wait_seconds << " s";
        return 1;
      }
      if (attempt % 10 == 0)
        FERRY_LOG(info, "broker-identity") << "waiting for an external address of service " << o.external_service;
      asio::steady_timer pause(io, std::chrono::seconds(2));
      pause.wait();
    }
    content += advertised_setting(o.advertise, o.external_listener, address);
  }
  if (content.empty()) content = "{}\n";
  if (!write_atomically(o.output, content)) return 1;
  FERRY_LOG(info, "broker-identity") << "node " << o.node << ": wrote " << o.output << " ("
                                     << content.substr(0, content.size() - 1) << ")";
  return 0;
}

}  // namespace ferry::manager
