#include "coord/acl_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "coord/acl_layout.h"
#include "coord/errc.h"
#include "coord/layout.h"
#include "coord/tests/zk_test_support.h"

namespace ferry::coord {
namespace {

using authz::acl_entry;
using authz::operation;
using authz::pattern_type;
using authz::permission;
using authz::resource_pattern;
using authz::resource_type;

std::unique_ptr<zk_session> open(const std::string& connect) {
  zk_session_options options;
  options.connect = connect;
  auto session = zk_session::connect(std::move(options));
  EXPECT_TRUE(session) << session.error().message();
  return session ? std::move(session).value() : nullptr;
}

resource_pattern orders() { return {resource_type::topic, "orders", pattern_type::literal}; }
resource_pattern app_groups() { return {resource_type::group, "app-", pattern_type::prefixed}; }
acl_entry alice_reads() { return {"User:alice", "*", operation::read, permission::allow}; }
acl_entry bob_writes() { return {"User:bob", "10.0.0.2", operation::write, permission::deny}; }

std::vector<std::string> notifications(zk_session& zk, pattern_type pattern) {
  const std::string parent(layout::acl_changes_path(pattern));
  auto names = zk.get_children(parent);
  std::vector<std::string> out;
  if (!names) return out;
  std::sort(names.value().begin(), names.value().end());
  for (const auto& name : names.value()) out.push_back(zk.get(layout::child_path(parent, name)).value().data);
  return out;
}

TEST(acl_store, adds_reads_back_and_announces_in_kafkas_layout) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  acl_store store(*zk);
  const std::vector<acl_entry> two{alice_reads(), bob_writes()};
  ASSERT_TRUE(store.add(orders(), two));
  ASSERT_TRUE(store.add(app_groups(), std::vector<acl_entry>{alice_reads()}));
  EXPECT_EQ(store.read(orders()).value(), two);
  EXPECT_EQ(zk->get("/kafka-acl/Topic/orders").value().data, layout::encode_acls(two));
  EXPECT_TRUE(zk->get("/kafka-acl-extended/prefixed/Group/app-"));
  EXPECT_EQ(notifications(*zk, pattern_type::literal), std::vector<std::string>{"TOPIC:orders"});
  EXPECT_EQ(notifications(*zk, pattern_type::prefixed),
            std::vector<std::string>{layout::encode_acl_change(app_groups())});

  // Adding what is there already changes nothing and announces nothing.
  ASSERT_TRUE(store.add(orders(), std::vector<acl_entry>{alice_reads()}));
  EXPECT_EQ(notifications(*zk, pattern_type::literal).size(), 1U);

  const auto all = store.read_all();
  ASSERT_TRUE(all);
  EXPECT_EQ(all.value().size(), 3U);
  EXPECT_NE(std::find(all.value().begin(), all.value().end(), authz::acl_binding{app_groups(), alice_reads()}),
            all.value().end());
}

TEST(acl_store, removing_the_last_entry_deletes_the_node) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  acl_store store(*zk);
  ASSERT_TRUE(store.add(orders(), std::vector<acl_entry>{alice_reads(), bob_writes()}));
  const auto bobs = store.remove_if(orders(), [](const acl_entry& e) { return e.principal == "User:bob"; });
  ASSERT_TRUE(bobs);
  EXPECT_EQ(bobs.value(), std::vector<acl_entry>{bob_writes()});
  EXPECT_EQ(store.read(orders()).value(), std::vector<acl_entry>{alice_reads()});
  const auto rest = store.remove_if(orders(), [](const acl_entry&) { return true; });
  ASSERT_TRUE(rest);
  EXPECT_EQ(rest.value(), std::vector<acl_entry>{alice_reads()});
  EXPECT_EQ(zk->get("/kafka-acl/Topic/orders").error(), errc::no_node);
  EXPECT_TRUE(store.read(orders()).value().empty());
  EXPECT_EQ(notifications(*zk, pattern_type::literal).size(), 3U);
  // Nothing to remove: no write, no announcement.
  ASSERT_TRUE(store.remove_if(orders(), [](const acl_entry&) { return true; }));
  EXPECT_EQ(notifications(*zk, pattern_type::literal).size(), 3U);
}

TEST(acl_store, writers_racing_on_one_pattern_lose_nothing) {
  const auto connect = test::fresh_connect();
  // A writer loses a round only to another's write, so with fewer writes by the others than acl_store's attempts
  // (16) every add gets through.
  constexpr int writers = 3;
  constexpr int each = 5;
  std::vector<std::thread> threads;
  threads.reserve(writers);
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto zk = open(connect);
      if (!zk) return;
      acl_store store(*zk);
      for (int i = 0; i < each; ++i) {
        const acl_entry e{"User:writer-" + std::to_string(w) + "-" + std::to_string(i), "*", operation::read,
                          permission::allow};
        EXPECT_TRUE(store.add(orders(), std::vector<acl_entry>{e}));
      }
    });
  }
  for (auto& t : threads) t.join();
  auto zk = open(connect);
  ASSERT_TRUE(zk);
  EXPECT_EQ(acl_store(*zk).read(orders()).value().size(), static_cast<std::size_t>(writers * each));
}

TEST(acl_store, a_node_that_does_not_decode_is_reported_and_never_overwritten) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  ASSERT_TRUE(zk->create("/kafka-acl/Topic/broken", "not json", create_mode::persistent, true));
  // What Kafka 3.9 writes reads like Ferry's own.
  ASSERT_TRUE(zk->create("/kafka-acl/Cluster/kafka-cluster",
                         R"({"version":1,"acls":[{"principal":"User:admin","permissionType":"Allow",)"
                         R"("operation":"All","host":"*"}]})",
                         create_mode::persistent, true));
  acl_store store(*zk);
  std::vector<std::string> unreadable;
  const auto all = store.read_all(&unreadable);
  ASSERT_TRUE(all);
  ASSERT_EQ(all.value().size(), 1U);
  EXPECT_EQ(all.value()[0].resource,
            (resource_pattern{resource_type::cluster, "kafka-cluster", pattern_type::literal}));
  EXPECT_EQ(all.value()[0].entry.op, operation::all);
  EXPECT_EQ(unreadable, std::vector<std::string>{"/kafka-acl/Topic/broken"});
  const resource_pattern broken{resource_type::topic, "broken", pattern_type::literal};
  const auto refused = store.add(broken, std::vector<acl_entry>{alice_reads()});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::invalid_data);
  EXPECT_EQ(zk->get("/kafka-acl/Topic/broken").value().data, "not json");
}

}  // namespace
}  // namespace ferry::coord
