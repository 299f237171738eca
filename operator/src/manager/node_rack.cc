#include "manager/node_rack.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "base/log.h"
#include "kube/api_client.h"
#include "kube/api_config.h"

namespace ferry::manager {
namespace {

constexpr const char* node_rack_usage =
    "usage: ferry-operator node-rack --output FILE [--node NAME] [--label LABEL] [--kubeconfig FILE]\n"
    "\n"
    "Writes FILE as a broker config holding 'broker.rack: <the node's LABEL>' (an empty mapping when the node\n"
    "has no such label). NAME defaults to $NODE_NAME, LABEL to topology.kubernetes.io/zone; without\n"
    "--kubeconfig the pod's service account is used (it needs 'get' on nodes).\n";

struct node_rack_options {
  std::string node;
  std::string label = "topology.kubernetes.io/zone";
  std::string output;
  std::string kubeconfig;
};

bool parse(const std::vector<std::string>& args, node_rack_options& o) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any other thread runs
  if (const char* node = std::getenv("NODE_NAME"); node != nullptr) o.node = node;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& flag = args[i];
    std::string* target = flag == "--node"         ? &o.node
                          : flag == "--label"      ? &o.label
                          : flag == "--output"     ? &o.output
                          : flag == "--kubeconfig" ? &o.kubeconfig
                                                   : nullptr;
    if (target == nullptr || i + 1 == args.size()) {
      std::cerr << "ferry-operator node-rack: error: unexpected argument '" << flag << "'\n" << node_rack_usage;
      return false;
    }
    *target = args[++i];
  }
  if (o.output.empty() || o.node.empty() || o.label.empty()) {
    std::cerr << "ferry-operator node-rack: error: --output and --node (or $NODE_NAME) are required\n"
              << node_rack_usage;
    return false;
  }
  return true;
}

}  // namespace

std::string node_rack_config(const nlohmann::json& node, const std::string& label) {
  const auto labels = node.value("/metadata/labels"_json_pointer, nlohmann::json::object());
  const auto value = labels.find(label);
  if (value == labels.end() || !value->is_string() || value->get<std::string>().empty()) return "{}\n";
  // A JSON string is a YAML scalar, whatever characters the label value holds.
  return "broker.rack: " + value->dump() + "\n";
}

int run_node_rack(const std::vector<std::string>& args) {
  node_rack_options o;
  if (!parse(args, o)) return 2;
  auto config = o.kubeconfig.empty() ? kube::in_cluster_config() : kube::load_kubeconfig(o.kubeconfig);
  if (!config) return 1;
  boost::asio::io_context io;
  auto api = kube::api_client::create(io, config.value());
  if (!api) return 1;
  std::optional<result<kube::http_response>> response;
  auto& client = *api.value();
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        response = co_await client.async_send(kube::api_client::verb::get, "/api/v1/nodes/" + o.node);
      },
      boost::asio::detached);
  io.run();
  if (!response || !*response) {
    FERRY_LOG(error, "node-rack") << "cannot reach the API server to read node " << o.node;
    return 1;
  }
  const auto& answer = response->value();
  if (answer.status != 200) {
    FERRY_LOG(error, "node-rack") << "reading node " << o.node << " failed with HTTP " << answer.status << ": "
                                  << answer.body.substr(0, 300);
    return 1;
  }
  const auto node = nlohmann::json::parse(answer.body, nullptr, false);
  if (node.is_discarded()) {
    FERRY_LOG(error, "node-rack") << "node " << o.node << " came back as malformed JSON";
    return 1;
  }
  const auto content = node_rack_config(node, o.label);
  if (content == "{}\n")
    FERRY_LOG(warn, "node-rack") << "node " << o.node << " has no label " << o.label
                                 << ": the broker runs without a rack";
  const auto temporary = o.output + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << content;
    if (!out.flush()) {
      FERRY_LOG(error, "node-rack") << "cannot write " << temporary;
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, o.output, ec);
  if (ec) {
    FERRY_LOG(error, "node-rack") << "cannot write " << o.output << ": " << ec.message();
    return 1;
  }
  FERRY_LOG(info, "node-rack") << "node " << o.node << ": wrote " << o.output << " ("
                               << content.substr(0, content.size() - 1) << ")";
  return 0;
}

}  // namespace ferry::manager
