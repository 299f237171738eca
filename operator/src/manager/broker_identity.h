#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ferry::manager {

// `ferry-operator broker-identity`: the broker pods' init container. It writes the settings of one broker that
// the pod spec cannot fill in itself, as a broker config file the broker reads after the shared one (`--config`
// twice):
// - broker.rack, from its node's zone label (a pod cannot read its node's labels through the downward API);
// - advertised.listeners with an address outside the cluster: the node's address and the node port of the
//   broker's own NodePort Service, or its LoadBalancer Service's address once the cloud has assigned one.
int run_broker_identity(const std::vector<std::string>& args);

// "broker.rack: <label value>\n" for a Node object, or empty when the node has no such label (a single-zone
// cluster: the brokers run without a rack).
std::string rack_setting(const nlohmann::json& node, const std::string& label);

// The address clients outside the cluster reach the broker at through its own Service: "host:port", or empty
// while there is none yet (a LoadBalancer not yet provisioned, a node without the address type). For a NodePort
// Service `node` is the broker's Node and `address_type` the node address to use (ExternalIP falls back to
// InternalIP); for a LoadBalancer the Service's first ingress (IP, else hostname) and its port.
std::string external_address(const nlohmann::json& service, const nlohmann::json& node,
                             const std::string& address_type);

// "advertised.listeners: \"<fixed>,<name>://<address>\"\n".
std::string advertised_setting(const std::vector<std::string>& fixed, const std::string& name,
                               const std::string& address);

}  // namespace ferry::manager
