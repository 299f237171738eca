#include "users/user_spec.h"

#include <gtest/gtest.h>

namespace ferry::users {
namespace {

using json = nlohmann::json;

json user(json spec, const std::string& name = "orders-app") {
  return {{"metadata", {{"name", name}, {"namespace", "shop"}}}, {"spec", std::move(spec)}};
}

user_spec read(const json& resource) {
  auto read = read_user_spec(resource);
  if (const auto* why = std::get_if<std::string>(&read)) ADD_FAILURE() << *why;
  return std::get<user_spec>(read);
}

std::string refusal(const json& resource) {
  auto read = read_user_spec(resource);
  const auto* why = std::get_if<std::string>(&read);
  return why != nullptr ? *why : "(accepted)";
}

TEST(UserSpec, AScramUserWithAclsAndQuotasReadsAsKafkaNamesThem) {
  const auto spec = read(user({{"authentication", {{"type", "scram-sha-512"}}},
                               {"authorization",
                                {{"acls",
                                  {{{"resource", {{"type", "topic"}, {"name", "orders-"}, {"patternType", "prefix"}}},
                                    {"operations", {"Read", "Describe"}}},
                                   {{"resource", {{"type", "group"}, {"name", "orders-app"}}},
                                    {"operations", {"Read"}},
                                    {"host", "::1"},
                                    {"type", "deny"}}}}}},
                               {"quotas", {{"producerByteRate", 1048576}, {"requestPercentage", 55}}}}));
  EXPECT_EQ(spec.auth, authentication::scram_sha_512);
  EXPECT_EQ(spec.principal(), "User:orders-app");
  ASSERT_EQ(spec.acls.size(), 3U);
  const authz::resource_pattern orders{authz::resource_type::topic, "orders-", authz::pattern_type::prefixed};
  EXPECT_EQ(spec.acls[0],
            (authz::acl_binding{orders, {"User:orders-app", "*", authz::operation::read, authz::permission::allow}}));
  EXPECT_EQ(spec.acls[1].entry.op, authz::operation::describe);
  // A host as Java writes it, which is what the brokers compare.
  EXPECT_EQ(spec.acls[2].entry.host, "0:0:0:0:0:0:0:1");
  EXPECT_EQ(spec.acls[2].entry.perm, authz::permission::deny);
  EXPECT_EQ(spec.quotas, (std::map<std::string, double>{{"producer_byte_rate", 1048576}, {"request_percentage", 55}}));
}

TEST(UserSpec, ATlsUserIsItsCertificatesSubjectAndNoSpecIsAPrincipalOfNothing) {
  EXPECT_EQ(read(user({{"authentication", {{"type", "tls"}}}})).principal(), "User:CN=orders-app");
  const auto bare = read(user(json::object()));
  EXPECT_EQ(bare.auth, authentication::none);
  EXPECT_TRUE(bare.acls.empty() && bare.quotas.empty());
  const auto cluster = read(
      user({{"authorization", {{"acls", {{{"resource", {{"type", "cluster"}}}, {"operations", {"Describe"}}}}}}}}));
  EXPECT_EQ(cluster.acls.at(0).resource.name, "kafka-cluster");
}

TEST(UserSpec, WhatKafkaWouldRefuseIsRefusedNamingTheField) {
  const auto acl = [](json entry) { return user({{"authorization", {{"acls", json::array({std::move(entry)})}}}}); };
  EXPECT_NE(refusal(acl({{"resource", {{"type", "cluster"}}}, {"operations", {"Write"}}}))
                .find("spec.authorization.acls[0]: operation Write does not apply to Clusters"),
            std::string::npos);
  EXPECT_NE(refusal(acl({{"resource", {{"type", "topic"}, {"name", "t"}}}, {"operations", {"Fly"}}})).find("Fly"),
            std::string::npos);
  EXPECT_NE(refusal(acl({{"resource", {{"type", "topic"}}}, {"operations", {"Read"}}})).find(".resource.name"),
            std::string::npos);
  EXPECT_NE(
      refusal(
          acl({{"resource", {{"type", "topic"}, {"name", "t"}}}, {"operations", {"Read"}}, {"host", "pod-a.local"}}))
          .find(".host pod-a.local: must be an IP address or *"),
      std::string::npos);
  EXPECT_NE(refusal(user({{"quotas", {{"requestPercentage", 0}}}})).find("spec.quotas.requestPercentage"),
            std::string::npos);
  EXPECT_NE(refusal(user({{"authentication", {{"type", "tls"}, {"password", json::object()}}}}))
                .find("only for scram-sha-512"),
            std::string::npos);
  EXPECT_NE(refusal(user({{"authentication", {{"type", "gssapi"}}}})).find("spec.authentication.type gssapi"),
            std::string::npos);
  // The operator's own Secret cannot be the source of the password.
  const json own_secret = json::parse(R"({"type": "scram-sha-512",
      "password": {"valueFrom": {"secretKeyRef": {"name": "orders-app", "key": "pw"}}}})");
  EXPECT_NE(refusal(user({{"authentication", own_secret}})).find("is the Secret the operator writes"),
            std::string::npos);
}

TEST(UserSpec, AnAclGoesToTheStatusAndBack) {
  const auto spec =
      read(user({{"authorization",
                  {{"acls",
                    {{{"resource", {{"type", "transactionalId"}, {"name", "tx-"}, {"patternType", "prefix"}}},
                      {"operations", {"Write"}},
                      {"host", "10.0.0.7"},
                      {"type", "deny"}}}}}}}));
  const auto& acl = spec.acls.at(0);
  const auto entry = acl_to_json(acl);
  EXPECT_EQ(entry["resource"]["type"], "transactionalId");
  EXPECT_EQ(entry["resource"]["patternType"], "prefix");
  EXPECT_EQ(acl_from_json(entry, "User:orders-app"), acl);
  EXPECT_FALSE(acl_from_json(json::array(), "User:orders-app"));
}

}  // namespace
}  // namespace ferry::users
