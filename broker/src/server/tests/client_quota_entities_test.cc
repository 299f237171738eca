#include "server/client_quota_entities.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

using quota::entity_name;
using quota::quota_key;

// The view's config maps become the quota library's entities: quota keys only (SCRAM credentials beside them are
// not quotas), "<default>" as the default, and stored values parsed as Kafka's brokers parse them.
TEST(client_quota_entities, the_views_entities_become_quota_entries) {
  coord::cluster_view view;
  view.users["alice"] = {{"producer_byte_rate", "1024"}, {"SCRAM-SHA-512", "salt=..."}};
  view.users["<default>"] = {{"consumer_byte_rate", "4096"}};
  view.users["bob"] = {{"SCRAM-SHA-256", "salt=..."}};     // no quota
  view.users["carol"] = {{"producer_byte_rate", "10.5"}};  // a LONG that does not parse: left out
  view.client_quotas[{std::string("alice"), "etl"}] = {{"consumer_byte_rate", "2048"}};
  view.client_quotas[{std::nullopt, "<default>"}] = {{"producer_byte_rate", "512"}};
  const auto entries = client_quota_entries(view);
  ASSERT_EQ(entries.size(), 4U);
  EXPECT_EQ(entries.at({entity_name::of("alice"), std::nullopt}),
            (quota::quota_values{{quota_key::producer_byte_rate, 1024}}));
  EXPECT_EQ(entries.at({entity_name::default_name(), std::nullopt}),
            (quota::quota_values{{quota_key::consumer_byte_rate, 4096}}));
  EXPECT_EQ(entries.at({entity_name::of("alice"), entity_name::of("etl")}),
            (quota::quota_values{{quota_key::consumer_byte_rate, 2048}}));
  EXPECT_EQ(entries.at({std::nullopt, entity_name::default_name()}),
            (quota::quota_values{{quota_key::producer_byte_rate, 512}}));
}

TEST(client_quota_entities, entities_are_stored_where_kafka_stores_them) {
  using E = quota::quota_entity;
  EXPECT_EQ(config_entity_of(E{entity_name::of("CN=a b"), std::nullopt}),
            (std::pair<std::string, std::string>{"users", "CN%3Da%20b"}));
  EXPECT_EQ(config_entity_of(E{entity_name::default_name(), entity_name::of("etl")}),
            (std::pair<std::string, std::string>{"users", "<default>/clients/etl"}));
  EXPECT_EQ(config_entity_of(E{std::nullopt, entity_name::default_name()}),
            (std::pair<std::string, std::string>{"clients", "<default>"}));
}

}  // namespace
}  // namespace ferry::server
