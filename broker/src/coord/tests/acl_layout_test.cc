#include "coord/acl_layout.h"

#include <gtest/gtest.h>

#include "coord/errc.h"

namespace ferry::coord::layout {
namespace {

using authz::operation;
using authz::pattern_type;
using authz::permission;
using authz::resource_type;

TEST(acl_layout, paths_are_kafkas) {
  EXPECT_EQ(acl_path({resource_type::topic, "orders", pattern_type::literal}), "/kafka-acl/Topic/orders");
  EXPECT_EQ(acl_path({resource_type::transactional_id, "tx-", pattern_type::prefixed}),
            "/kafka-acl-extended/prefixed/TransactionalId/tx-");
  EXPECT_EQ(acl_path({resource_type::cluster, "kafka-cluster", pattern_type::literal}),
            "/kafka-acl/Cluster/kafka-cluster");
  EXPECT_EQ(acl_changes_path(pattern_type::literal), "/kafka-acl-changes");
  EXPECT_EQ(acl_changes_path(pattern_type::prefixed), "/kafka-acl-extended-changes");
}

// What Kafka 3.9's AclAuthorizer writes (ZkData.scala: ResourceZNode, the change stores).
TEST(acl_layout, reads_what_kafka_writes) {
  const auto entries = decode_acls(
      R"({"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},)"
      R"({"principal":"User:CN=bob,O=x","permissionType":"Deny","operation":"IdempotentWrite","host":"10.0.0.1"}]})");
  ASSERT_TRUE(entries) << entries.error().message();
  ASSERT_EQ(entries.value().size(), 2U);
  EXPECT_EQ(entries.value()[0], (authz::acl_entry{"User:alice", "*", operation::read, permission::allow}));
  EXPECT_EQ(entries.value()[1],
            (authz::acl_entry{"User:CN=bob,O=x", "10.0.0.1", operation::idempotent_write, permission::deny}));

  const auto literal = decode_acl_change("TOPIC:orders:eu", false);
  ASSERT_TRUE(literal);
  EXPECT_EQ(literal.value(), (authz::resource_pattern{resource_type::topic, "orders:eu", pattern_type::literal}));
  const auto txn = decode_acl_change("TransactionalId:tx", false);
  ASSERT_TRUE(txn);
  EXPECT_EQ(txn.value().type, resource_type::transactional_id);
  const auto prefixed =
      decode_acl_change(R"({"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"})", true);
  ASSERT_TRUE(prefixed);
  EXPECT_EQ(prefixed.value(), (authz::resource_pattern{resource_type::group, "app-", pattern_type::prefixed}));
}

TEST(acl_layout, writes_what_kafka_reads_and_reads_it_back) {
  const std::vector<authz::acl_entry> entries{{"User:alice", "*", operation::describe_configs, permission::allow}};
  EXPECT_EQ(encode_acls(entries), R"({"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",)"
                                  R"("operation":"DescribeConfigs","host":"*"}]})");
  EXPECT_EQ(decode_acls(encode_acls(entries)).value(), entries);
  const authz::resource_pattern literal{resource_type::transactional_id, "tx", pattern_type::literal};
  EXPECT_EQ(encode_acl_change(literal), "TRANSACTIONAL_ID:tx");
  EXPECT_EQ(decode_acl_change(encode_acl_change(literal), false).value(), literal);
  const authz::resource_pattern prefixed{resource_type::topic, "orders-", pattern_type::prefixed};
  EXPECT_EQ(encode_acl_change(prefixed),
            R"({"version":1,"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED"})");
  EXPECT_EQ(decode_acl_change(encode_acl_change(prefixed), true).value(), prefixed);
}

TEST(acl_layout, malformed_content_is_invalid_data) {
  for (const std::string_view bad : {
           "",
           "{",
           "[]",
           R"({"version":2,"acls":[]})",
           R"({"version":1})",
           R"({"version":1,"acls":{}})",
           R"({"version":1,"acls":[1]})",
           R"({"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Read"}]})",
           R"({"version":1,"acls":[{"principal":"User:a","permissionType":"Maybe","operation":"Read","host":"*"}]})",
           R"({"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Any","host":"*"}]})",
       }) {
    const auto decoded = decode_acls(bad);
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error(), errc::invalid_data) << bad;
  }
  for (const std::string_view bad : {"", "orders", "TOPICS:orders", "ANY:orders", "TOPIC:"})
    EXPECT_FALSE(decode_acl_change(bad, false)) << bad;
  for (const std::string_view bad : {
           "TOPIC:orders",
           R"({"version":1,"resourceType":"TOPIC","name":"o","patternType":"MATCH"})",
           R"({"version":1,"resourceType":"TOPIC","name":"","patternType":"LITERAL"})",
           R"({"resourceType":"TOPIC","name":"o","patternType":"LITERAL"})",
       })
    EXPECT_FALSE(decode_acl_change(bad, true)) << bad;
}

TEST(acl_layout, names_that_are_not_utf8_are_written_as_replacement_characters) {
  const std::vector<authz::acl_entry> entries{{"User:\xff", "*", operation::read, permission::allow}};
  const auto decoded = decode_acls(encode_acls(entries));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value()[0].principal, "User:\xef\xbf\xbd");
}

}  // namespace
}  // namespace ferry::coord::layout
