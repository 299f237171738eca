#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ferry::manager {

// `ferry-operator node-rack`: the broker pods' init container. A pod cannot read its node's labels through the
// downward API, so this reads the node's zone label from the API server and writes a one-setting broker
// config file (broker.rack) that the broker reads after the shared one (`--config` twice).
int run_node_rack(const std::vector<std::string>& args);

// The file's content for a Node object: "broker.rack: <label value>", or an empty mapping when the node has no
// such label (a single-zone cluster: the brokers run without a rack).
std::string node_rack_config(const nlohmann::json& node, const std::string& label);

}  // namespace ferry::manager
