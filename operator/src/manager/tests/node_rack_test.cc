#include "manager/node_rack.h"

#include <gtest/gtest.h>

namespace ferry::manager {
namespace {

TEST(node_rack, zone_label_becomes_the_broker_rack) {
  const auto node = nlohmann::json::parse(
      R"({"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "eu-west-1a", "kubernetes.io/os": "linux"}}})");
  EXPECT_EQ(node_rack_config(node, "topology.kubernetes.io/zone"), "broker.rack: \"eu-west-1a\"\n");
  EXPECT_EQ(node_rack_config(node, "kubernetes.io/os"), "broker.rack: \"linux\"\n");
}

TEST(node_rack, no_label_means_no_rack) {
  EXPECT_EQ(node_rack_config(nlohmann::json::parse(R"({"metadata": {"name": "n1"}})"), "topology.kubernetes.io/zone"),
            "{}\n");
  EXPECT_EQ(node_rack_config(nlohmann::json::parse(R"({"metadata": {"labels": {"topology.kubernetes.io/zone": ""}}})"),
                             "topology.kubernetes.io/zone"),
            "{}\n");
  EXPECT_EQ(node_rack_config(nlohmann::json::parse(R"({"metadata": {"labels": {"topology.kubernetes.io/zone": 3}}})"),
                             "topology.kubernetes.io/zone"),
            "{}\n");
}

// A label value is written as a quoted scalar, so YAML reads back exactly the label's text.
TEST(node_rack, value_is_quoted) {
  const auto node = nlohmann::json::parse(R"({"metadata": {"labels": {"zone": "a: b # c"}}})");
  EXPECT_EQ(node_rack_config(node, "zone"), "broker.rack: \"a: b # c\"\n");
}

}  // namespace
}  // namespace ferry::manager
