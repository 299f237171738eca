#include "authz/acl_snapshot.h"

#include <gtest/gtest.h>

#include <random>

namespace ferry::authz {
namespace {

acl_binding acl(resource_type t, std::string name, pattern_type p, std::string principal, operation op, permission perm,
                std::string host = "*") {
  return {{t, std::move(name), p}, {std::move(principal), std::move(host), op, perm}};
}

const requester alice{"User:alice", "10.0.0.1"};
const requester bob{"User:bob", "10.0.0.2"};
const decision_settings strict{};

TEST(acl_snapshot, with_no_acl_the_setting_decides_for_everyone) {
  const acl_snapshot none;
  EXPECT_FALSE(none.authorize(alice, operation::read, resource_type::topic, "orders", strict));
  EXPECT_TRUE(none.authorize(alice, operation::read, resource_type::topic, "orders", {{}, true}));
  // One ACL for alice on the topic: from then on the setting no longer applies to it, for anyone.
  const acl_snapshot one(
      {acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::read, permission::allow)});
  EXPECT_TRUE(one.authorize(alice, operation::read, resource_type::topic, "orders", {{}, true}));
  EXPECT_FALSE(one.authorize(bob, operation::read, resource_type::topic, "orders", {{}, true}));
  EXPECT_TRUE(one.authorize(bob, operation::read, resource_type::topic, "payments", {{}, true}));
}

TEST(acl_snapshot, literal_wildcard_and_prefixed_acls_apply) {
  const acl_snapshot acls({
      acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::write, permission::allow),
      acl(resource_type::topic, "*", pattern_type::literal, "User:bob", operation::read, permission::allow),
      acl(resource_type::topic, "pay", pattern_type::prefixed, "User:alice", operation::read, permission::allow),
  });
  EXPECT_TRUE(acls.authorize(alice, operation::write, resource_type::topic, "orders", strict));
  EXPECT_FALSE(acls.authorize(alice, operation::write, resource_type::topic, "orders2", strict));
  EXPECT_TRUE(acls.authorize(bob, operation::read, resource_type::topic, "anything", strict));
  EXPECT_TRUE(acls.authorize(alice, operation::read, resource_type::topic, "payments", strict));
  EXPECT_TRUE(acls.authorize(alice, operation::read, resource_type::topic, "pay", strict));
  EXPECT_FALSE(acls.authorize(alice, operation::read, resource_type::topic, "pa", strict));
  EXPECT_FALSE(acls.authorize(alice, operation::read, resource_type::group, "payments", strict));
}

TEST(acl_snapshot, a_deny_beats_an_allow_and_all_covers_every_operation) {
  const acl_snapshot acls({
      acl(resource_type::topic, "orders", pattern_type::literal, "User:*", operation::all, permission::allow),
      acl(resource_type::topic, "ord", pattern_type::prefixed, "User:bob", operation::write, permission::deny),
  });
  EXPECT_TRUE(acls.authorize(alice, operation::write, resource_type::topic, "orders", strict));
  EXPECT_TRUE(acls.authorize(bob, operation::read, resource_type::topic, "orders", strict));
  EXPECT_FALSE(acls.authorize(bob, operation::write, resource_type::topic, "orders", strict));
}

TEST(acl_snapshot, hosts_must_match_or_be_the_wildcard) {
  const acl_snapshot acls({acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::read,
                               permission::allow, "10.0.0.9")});
  EXPECT_FALSE(acls.authorize(alice, operation::read, resource_type::topic, "orders", strict));
  EXPECT_TRUE(acls.authorize({"User:alice", "10.0.0.9"}, operation::read, resource_type::topic, "orders", strict));
}

TEST(acl_snapshot, read_write_delete_and_alter_imply_describe_for_allows_only) {
  for (const auto op : {operation::read, operation::write, operation::remove, operation::alter}) {
    const acl_snapshot acls(
        {acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", op, permission::allow)});
    EXPECT_TRUE(acls.authorize(alice, operation::describe, resource_type::topic, "orders", strict)) << name_of(op);
  }
  const acl_snapshot configs({acl(resource_type::topic, "orders", pattern_type::literal, "User:alice",
                                  operation::alter_configs, permission::allow)});
  EXPECT_TRUE(configs.authorize(alice, operation::describe_configs, resource_type::topic, "orders", strict));
  EXPECT_FALSE(configs.authorize(alice, operation::describe, resource_type::topic, "orders", strict));
  // A DENY of Read does not deny Describe.
  const acl_snapshot deny({
      acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::describe, permission::allow),
      acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::read, permission::deny),
  });
  EXPECT_TRUE(deny.authorize(alice, operation::describe, resource_type::topic, "orders", strict));
  EXPECT_FALSE(deny.authorize(alice, operation::read, resource_type::topic, "orders", strict));
}

TEST(acl_snapshot, super_users_pass_every_check_even_a_deny) {
  const acl_snapshot acls(
      {acl(resource_type::topic, "orders", pattern_type::literal, "User:admin", operation::all, permission::deny)});
  const decision_settings settings{{"User:admin", "User:CN=broker,O=ferry"}, false};
  EXPECT_TRUE(acls.authorize({"User:admin", "h"}, operation::write, resource_type::topic, "orders", settings));
  EXPECT_TRUE(acls.authorize({"User:CN=broker,O=ferry", "h"}, operation::cluster_action, resource_type::cluster,
                             cluster_name, settings));
  EXPECT_FALSE(acls.authorize(alice, operation::write, resource_type::topic, "orders", settings));
}

TEST(acl_snapshot, authorize_any_needs_an_allow_no_deny_covers) {
  const auto write = [](const acl_snapshot& acls, const requester& who) {
    return acls.authorize_any(who, operation::write, resource_type::topic, strict);
  };
  EXPECT_FALSE(write(acl_snapshot{}, alice));
  EXPECT_TRUE(write(acl_snapshot({acl(resource_type::topic, "orders", pattern_type::literal, "User:alice",
                                      operation::write, permission::allow)}),
                    alice));
  // A literal DENY of the same name, or a DENY of a prefix of it, covers the ALLOW.
  EXPECT_FALSE(write(
      acl_snapshot({
          acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::write, permission::allow),
          acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::write, permission::deny),
      }),
      alice));
  EXPECT_FALSE(
      write(acl_snapshot({
                acl(resource_type::topic, "orders-eu", pattern_type::prefixed, "User:alice", operation::write,
                    permission::allow),
                acl(resource_type::topic, "orders", pattern_type::prefixed, "User:*", operation::all, permission::deny),
            }),
            alice));
  // A prefixed DENY narrower than the ALLOW leaves names it does not cover.
  EXPECT_TRUE(write(acl_snapshot({
                        acl(resource_type::topic, "orders", pattern_type::prefixed, "User:alice", operation::write,
                            permission::allow),
                        acl(resource_type::topic, "orders-eu", pattern_type::prefixed, "User:alice", operation::write,
                            permission::deny),
                    }),
                    alice));
  // A wildcard DENY refuses whatever else is allowed; Read does not count for Write.
  EXPECT_FALSE(write(
      acl_snapshot({
          acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::write, permission::allow),
          acl(resource_type::topic, "*", pattern_type::literal, "User:alice", operation::write, permission::deny),
      }),
      alice));
  EXPECT_FALSE(write(acl_snapshot({acl(resource_type::topic, "orders", pattern_type::literal, "User:alice",
                                       operation::read, permission::allow)}),
                     alice));
  EXPECT_FALSE(write(acl_snapshot({acl(resource_type::topic, "orders", pattern_type::literal, "User:alice",
                                       operation::write, permission::allow)}),
                     bob));
}

TEST(acl_snapshot, filters_select_as_kafka_does) {
  const acl_snapshot acls({
      acl(resource_type::topic, "orders", pattern_type::literal, "User:alice", operation::read, permission::allow),
      acl(resource_type::topic, "*", pattern_type::literal, "User:bob", operation::read, permission::allow),
      acl(resource_type::topic, "ord", pattern_type::prefixed, "User:bob", operation::write, permission::deny),
      acl(resource_type::group, "orders", pattern_type::literal, "User:alice", operation::read, permission::allow),
  });
  EXPECT_EQ(acls.size(), 4U);
  EXPECT_EQ(acls.select({}).size(), 4U);
  acl_filter exact{resource_type::topic, "orders", pattern_type::any};
  EXPECT_EQ(acls.select(exact).size(), 1U);
  acl_filter match{resource_type::topic, "orders", pattern_type::match};
  EXPECT_EQ(acls.select(match).size(), 3U);
  acl_filter prefixed{resource_type::any, std::nullopt, pattern_type::prefixed};
  ASSERT_EQ(acls.select(prefixed).size(), 1U);
  EXPECT_EQ(acls.select(prefixed)[0].resource.name, "ord");
  acl_filter by_principal;
  by_principal.principal = "User:alice";
  EXPECT_EQ(acls.select(by_principal).size(), 2U);
  acl_filter deny;
  deny.perm = permission::deny;
  EXPECT_EQ(acls.select(deny).size(), 1U);
}

// The index decides as a scan of every ACL with Kafka's rules would, over random ACL sets and requests.
bool reference_authorize(const std::vector<acl_binding>& all, const requester& who, operation op, resource_type type,
                         const std::string& name, const decision_settings& settings) {
  std::vector<acl_entry> applying;
  for (const auto& b : all) {
    if (b.resource.type != type) continue;
    const bool applies = b.resource.pattern == pattern_type::literal
                             ? (b.resource.name == name || b.resource.name == "*")
                             : name.starts_with(b.resource.name);
    if (applies) applying.push_back(b.entry);
  }
  if (applying.empty()) return settings.allow_if_no_acl_found;
  const auto matches = [&](const acl_entry& e, operation o, permission p) {
    return e.perm == p && (e.principal == who.principal || e.principal == "User:*") &&
           (e.host == who.host || e.host == "*") && (e.op == o || e.op == operation::all);
  };
  bool allowed = false;
  for (const auto& e : applying) {
    if (matches(e, op, permission::deny)) return false;
    allowed = allowed || matches(e, op, permission::allow) ||
              (op == operation::describe &&
               (matches(e, operation::read, permission::allow) || matches(e, operation::write, permission::allow) ||
                matches(e, operation::remove, permission::allow) || matches(e, operation::alter, permission::allow))) ||
              (op == operation::describe_configs && matches(e, operation::alter_configs, permission::allow));
  }
  return allowed;
}

TEST(acl_snapshot, decides_as_a_scan_of_every_acl_would) {
  std::mt19937 random(20261206);
  const std::vector<std::string> names{"*", "a", "ab", "abc", "abd", "b", "ba"};
  const std::vector<std::string> principals{"User:*", "User:alice", "User:bob"};
  const std::vector<std::string> hosts{"*", "10.0.0.1", "10.0.0.2"};
  const std::vector<operation> ops{operation::all,          operation::read,  operation::write,
                                   operation::describe,     operation::alter, operation::describe_configs,
                                   operation::alter_configs};
  const auto pick = [&](const auto& from) { return from[random() % from.size()]; };
  for (int round = 0; round < 300; ++round) {
    std::vector<acl_binding> all;
    const auto count = random() % 8;
    for (std::size_t i = 0; i < count; ++i) {
      const auto pattern = random() % 2 == 0 ? pattern_type::literal : pattern_type::prefixed;
      auto name = pick(names);
      if (pattern == pattern_type::prefixed && name == "*") name = "a";
      all.push_back(acl(random() % 4 == 0 ? resource_type::group : resource_type::topic, name, pattern,
                        pick(principals), pick(ops), random() % 3 == 0 ? permission::deny : permission::allow,
                        pick(hosts)));
    }
    const acl_snapshot snapshot(all);
    const decision_settings settings{{}, random() % 2 == 0};
    for (int ask = 0; ask < 20; ++ask) {
      const requester who{random() % 2 == 0 ? "User:alice" : "User:bob", random() % 2 == 0 ? "10.0.0.1" : "10.0.0.2"};
      const auto op = pick(ops);
      auto name = pick(names);
      if (name == "*") name = "abcd";
      EXPECT_EQ(snapshot.authorize(who, op, resource_type::topic, name, settings),
                reference_authorize(all, who, op, resource_type::topic, name, settings))
          << "round " << round << ", " << who.principal << " " << name_of(op) << " " << name;
    }
  }
}

}  // namespace
}  // namespace ferry::authz
