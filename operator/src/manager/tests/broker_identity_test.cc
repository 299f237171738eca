#include "manager/broker_identity.h"

#include <gtest/gtest.h>

namespace ferry::manager {
namespace {

using nlohmann::json;

TEST(broker_identity, zone_label_becomes_the_broker_rack) {
  const auto node = json::parse(
      R"({"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "eu-west-1a", "kubernetes.io/os": "linux"}}})");
  EXPECT_EQ(rack_setting(node, "topology.kubernetes.io/zone"), "broker.rack: \"eu-west-1a\"\n");
  EXPECT_EQ(rack_setting(node, "kubernetes.io/os"), "broker.rack: \"linux\"\n");
}

TEST(broker_identity, no_label_means_no_rack) {
  EXPECT_EQ(rack_setting(json::parse(R"({"metadata": {"name": "n1"}})"), "topology.kubernetes.io/zone"), "");
  EXPECT_EQ(rack_setting(json::parse(R"({"metadata": {"labels": {"topology.kubernetes.io/zone": ""}}})"),
                         "topology.kubernetes.io/zone"),
            "");
  EXPECT_EQ(rack_setting(json::parse(R"({"metadata": {"labels": {"topology.kubernetes.io/zone": 3}}})"),
                         "topology.kubernetes.io/zone"),
            "");
}

// A label value is written as a quoted scalar, so YAML reads back exactly the label's text.
TEST(broker_identity, rack_value_is_quoted) {
  const auto node = json::parse(R"({"metadata": {"labels": {"zone": "a: b # c"}}})");
  EXPECT_EQ(rack_setting(node, "zone"), "broker.rack: \"a: b # c\"\n");
}

TEST(broker_identity, node_port_service_is_reached_at_the_nodes_address) {
  const auto service = json::parse(R"({"spec": {"type": "NodePort", "ports": [{"port": 9094, "nodePort": 31092}]}})");
  const auto both = json::parse(R"({"status": {"addresses": [{"type": "Hostname", "address": "node-1"},
      {"type": "InternalIP", "address": "10.0.0.5"}, {"type": "ExternalIP", "address": "203.0.113.9"}]}})");
  EXPECT_EQ(external_address(service, both, "ExternalIP"), "203.0.113.9:31092");
  EXPECT_EQ(external_address(service, both, "InternalIP"), "10.0.0.5:31092");
  // Most bare-metal nodes have no ExternalIP: the internal one is the node's address.
  const auto internal = json::parse(R"({"status": {"addresses": [{"type": "InternalIP", "address": "fd00::5"}]}})");
  EXPECT_EQ(external_address(service, internal, "ExternalIP"), "[fd00::5]:31092");
  EXPECT_EQ(external_address(service, json::parse(R"({"status": {}})"), "ExternalIP"), "");
}

TEST(broker_identity, load_balancer_is_reached_at_its_ingress_once_it_has_one) {
  auto service = json::parse(R"({"spec": {"type": "LoadBalancer", "ports": [{"port": 9094, "nodePort": 30001}]},
                                 "status": {"loadBalancer": {}}})");
  EXPECT_EQ(external_address(service, json::object(), "ExternalIP"), "");
  service["status"]["loadBalancer"]["ingress"] = json::parse(R"([{"hostname": "b0.elb.example"}])");
  EXPECT_EQ(external_address(service, json::object(), "ExternalIP"), "b0.elb.example:9094");
  service["status"]["loadBalancer"]["ingress"] = json::parse(R"([{"ip": "198.51.100.4"}])");
  EXPECT_EQ(external_address(service, json::object(), "ExternalIP"), "198.51.100.4:9094");
  EXPECT_EQ(external_address(json::parse(R"({"spec": {"type": "ClusterIP", "ports": [{"port": 1}]}})"), json::object(),
                             "ExternalIP"),
            "");
}

TEST(broker_identity, advertised_listeners_keep_the_fixed_ones_first) {
  EXPECT_EQ(advertised_setting({"INTERNAL://b-0.h.ns.svc:9092"}, "EXTERNAL", "203.0.113.9:31092"),
            "advertised.listeners: \"INTERNAL://b-0.h.ns.svc:9092,EXTERNAL://203.0.113.9:31092\"\n");
}

}  // namespace
}  // namespace ferry::manager
