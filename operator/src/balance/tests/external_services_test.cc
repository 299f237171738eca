#include "balance/external_services.h"

#include <gtest/gtest.h>

namespace ferry::balance {
namespace {

using json = nlohmann::json;

json service(const std::string& name, json labels) {
  return {{"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
}

json external(const std::string& statefulset, int ordinal) {
  return service(statefulset + "-" + std::to_string(ordinal) + "-external",
                 {{"ferry.dev/external-for", statefulset}, {"ferry.dev/broker-ordinal", std::to_string(ordinal)}});
}

TEST(ExternalServicesTest, OnlyTheStatefulSetsServicesPastItsSizeArePruned) {
  const json list = {{"items",
                      {external("ferry-broker", 0), external("ferry-broker", 2), external("ferry-broker", 3),
                       external("ferry-broker", 4), external("other-broker", 5)}}};
  EXPECT_EQ(external_services_to_prune(list, "ferry-broker", 3),
            (std::vector<std::string>{"ferry-broker-3-external", "ferry-broker-4-external"}));
  EXPECT_TRUE(external_services_to_prune(list, "ferry-broker", 5).empty());
  EXPECT_EQ(external_services_to_prune(list, "other-broker", 0), std::vector<std::string>{"other-broker-5-external"});
}

TEST(ExternalServicesTest, ServicesWithoutAReadableOrdinalAreKept) {
  const json list = {
      {"items",
       {service("no-ordinal", {{"ferry.dev/external-for", "ferry-broker"}}),
        service("bad-ordinal", {{"ferry.dev/external-for", "ferry-broker"}, {"ferry.dev/broker-ordinal", "3x"}}),
        service("negative", {{"ferry.dev/external-for", "ferry-broker"}, {"ferry.dev/broker-ordinal", "-1"}}),
        service("number", {{"ferry.dev/external-for", "ferry-broker"}, {"ferry.dev/broker-ordinal", 7}}),
        service("no-labels", nullptr), json::object(), 1, nullptr}}};
  EXPECT_TRUE(external_services_to_prune(list, "ferry-broker", 0).empty());
  EXPECT_TRUE(external_services_to_prune(json::object(), "ferry-broker", 0).empty());
  EXPECT_TRUE(external_services_to_prune(json::parse("[1]"), "ferry-broker", 0).empty());
}

}  // namespace
}  // namespace ferry::balance
