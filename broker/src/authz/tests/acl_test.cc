#include "authz/acl.h"

#include <gtest/gtest.h>

namespace ferry::authz {
namespace {

acl_binding binding(resource_type t, std::string name, pattern_type p, operation op,
                    permission perm = permission::allow, std::string principal = "User:alice") {
  return {{t, std::move(name), p}, {std::move(principal), "*", op, perm}};
}

TEST(acl_names, are_kafkas_and_parse_back) {
  EXPECT_EQ(name_of(resource_type::transactional_id), "TransactionalId");
  EXPECT_EQ(enum_name_of(resource_type::transactional_id), "TRANSACTIONAL_ID");
  EXPECT_EQ(name_of(operation::remove), "Delete");
  EXPECT_EQ(name_of(operation::idempotent_write), "IdempotentWrite");
  EXPECT_EQ(name_of(permission::deny), "Deny");
  EXPECT_EQ(name_of(pattern_type::prefixed), "PREFIXED");
  for (int code = 2; code <= 7; ++code) {
    const auto t = static_cast<resource_type>(code);
    EXPECT_EQ(parse_resource_type(name_of(t)), t);
    EXPECT_EQ(parse_resource_type(enum_name_of(t)), t);
  }
  for (int code = 2; code <= 14; ++code) {
    const auto op = static_cast<operation>(code);
    EXPECT_EQ(parse_operation(name_of(op)), op);
  }
  EXPECT_EQ(parse_operation("DESCRIBE_CONFIGS"), operation::describe_configs);
  EXPECT_EQ(parse_permission("ALLOW"), permission::allow);
  EXPECT_EQ(parse_pattern_type("prefixed"), pattern_type::prefixed);
  EXPECT_FALSE(parse_resource_type("Topics"));
  EXPECT_FALSE(parse_operation(""));
}

TEST(acl_operations, apply_to_the_resource_types_kafka_allows) {
  EXPECT_TRUE(applies_to(resource_type::topic, operation::read));
  EXPECT_TRUE(applies_to(resource_type::topic, operation::alter_configs));
  EXPECT_FALSE(applies_to(resource_type::topic, operation::cluster_action));
  EXPECT_FALSE(applies_to(resource_type::topic, operation::idempotent_write));
  EXPECT_TRUE(applies_to(resource_type::group, operation::remove));
  EXPECT_FALSE(applies_to(resource_type::group, operation::write));
  EXPECT_TRUE(applies_to(resource_type::cluster, operation::idempotent_write));
  EXPECT_FALSE(applies_to(resource_type::cluster, operation::read));
  EXPECT_TRUE(applies_to(resource_type::transactional_id, operation::write));
  EXPECT_FALSE(applies_to(resource_type::transactional_id, operation::read));
  EXPECT_TRUE(applies_to(resource_type::user, operation::describe_tokens));
  EXPECT_TRUE(applies_to(resource_type::group, operation::all));
  EXPECT_FALSE(applies_to(resource_type::any, operation::all));
}

TEST(acl_validation, refuses_what_create_acls_refuses) {
  EXPECT_FALSE(invalid_reason(binding(resource_type::topic, "orders", pattern_type::literal, operation::write)));
  EXPECT_FALSE(invalid_reason(binding(resource_type::topic, "orders-", pattern_type::prefixed, operation::read)));
  EXPECT_FALSE(invalid_reason(
      binding(resource_type::cluster, "kafka-cluster", pattern_type::literal, operation::idempotent_write)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::any, "orders", pattern_type::literal, operation::read)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::topic, "orders", pattern_type::match, operation::read)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::topic, "orders", pattern_type::any, operation::read)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::topic, "", pattern_type::literal, operation::read)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::topic, "a/b", pattern_type::literal, operation::read)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::cluster, "other", pattern_type::literal, operation::alter)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::topic, "orders", pattern_type::literal, operation::any)));
  EXPECT_TRUE(invalid_reason(binding(resource_type::group, "g", pattern_type::literal, operation::write)));
  EXPECT_TRUE(
      invalid_reason(binding(resource_type::topic, "orders", pattern_type::literal, operation::read, permission::any)));
  EXPECT_TRUE(invalid_reason(
      binding(resource_type::topic, "orders", pattern_type::literal, operation::read, permission::allow, "alice")));
  const auto reason =
      invalid_reason(binding(resource_type::group, "g", pattern_type::literal, operation::alter_configs));
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "operation AlterConfigs does not apply to Groups");
}

}  // namespace
}  // namespace ferry::authz
