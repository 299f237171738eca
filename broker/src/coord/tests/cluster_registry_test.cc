#include "coord/cluster_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "coord/errc.h"
#include "coord/replica_placement.h"
#include "coord/testing/zookeeper_server.h"
#include "coord/tests/zk_test_support.h"

namespace ferry::coord {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr auto wait_time = 15s;

std::unique_ptr<cluster_registry> start_broker(const std::string& connect, std::int32_t id) {
  auto registry = cluster_registry::start(test::broker_options(connect, id));
  EXPECT_TRUE(registry) << "broker " << id << ": " << registry.error().message();
  return registry ? std::move(registry).value() : nullptr;
}

std::unique_ptr<zk_session> open_session(const std::string& connect) {
  zk_session_options options;
  options.connect = connect;
  auto session = zk_session::connect(options);
  EXPECT_TRUE(session) << session.error().message();
  return session ? std::move(session).value() : nullptr;
}

std::vector<broker_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<broker_id> out;
  for (const auto v : values) out.emplace_back(v);
  return out;
}

const partition_state* state_of(const cluster_view& v, const std::string& topic, std::int32_t p) {
  const auto* partition = v.find_partition({topic, partition_id{p}});
  return partition != nullptr && partition->state ? &*partition->state : nullptr;
}

// True once every partition of `topic` has a state with a leader.
bool has_leaders(const cluster_view& v, const std::string& topic) {
  const auto* t = v.find_topic(topic);
  if (t == nullptr || t->partitions.empty()) return false;
  return std::all_of(t->partitions.begin(), t->partitions.end(),
                     [](const auto& entry) { return entry.second.state && entry.second.state->leader != no_broker; });
}

std::shared_ptr<const cluster_view> await(cluster_registry& r,
                                          const std::function<bool(const cluster_view&)>& condition) {
  auto view = r.wait_for(condition, wait_time);
  EXPECT_TRUE(view) << "condition not met within " << wait_time.count() << " s";
  return view ? view.value() : r.view();
}

TEST(ClusterRegistry, RegistersAnEphemeralBrokerNode) {
  const auto connect = test::fresh_connect();
  auto zk = open_session(connect);
  auto broker = start_broker(connect, 1);
  ASSERT_TRUE(zk && broker);

  auto node = zk->get("/brokers/ids/1");
  ASSERT_TRUE(node);
  EXPECT_NE(node.value().stat.ephemeral_owner, 0);
  const auto registration = json::parse(node.value().data);
  EXPECT_EQ(registration["version"], 5);
  EXPECT_EQ(registration["host"], "broker-1.test");
  EXPECT_EQ(registration["port"], 9091);
  EXPECT_EQ(registration["endpoints"], json::array({"PLAINTEXT://broker-1.test:9091"}));
  EXPECT_FALSE(registration.contains("rack"));

  // The base paths and the cluster id exist.
  for (const char* path : {"/brokers/topics", "/config/topics", "/config/changes", "/admin/delete_topics"}) {
    EXPECT_TRUE(zk->exists(path).value()) << path;
  }
  const auto cluster = json::parse(zk->get("/cluster/id").value().data);
  EXPECT_EQ(cluster["version"], "1");
  EXPECT_EQ(cluster["id"], broker->cluster_id());
  EXPECT_EQ(broker->cluster_id().size(), 22u);

  const auto view = broker->view();
  EXPECT_EQ(view->cluster_id, broker->cluster_id());
  ASSERT_TRUE(view->is_live(broker_id{1}));
  EXPECT_EQ(view->brokers.at(broker_id{1}).port, 9091);
  EXPECT_EQ(view->brokers.at(broker_id{1}).epoch, node.value().stat.czxid);

  broker.reset();
  EXPECT_FALSE(zk->exists("/brokers/ids/1").value());
}

TEST(ClusterRegistry, BrokersSeeEachOtherAndShareTheClusterId) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  for (auto* r : {one.get(), two.get()}) {
    const auto view = await(*r, [](const cluster_view& v) { return v.brokers.size() == 2; });
    EXPECT_EQ(view->brokers.at(broker_id{2}).host, "broker-2.test");
    EXPECT_EQ(view->cluster_id, one->cluster_id());
  }
  // Exactly one of them is the controller, and both know which.
  const auto view = await(*two, [](const cluster_view& v) { return v.controller != no_broker; });
  EXPECT_NE(one->is_controller(), two->is_controller());
  EXPECT_EQ(view->controller, one->is_controller() ? broker_id{1} : broker_id{2});

  two.reset();
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 1; });
}

TEST(ClusterRegistry, RefusesABrokerIdHeldByALiveBroker) {
  const auto connect = test::fresh_connect();
  auto other = open_session(connect);
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->create("/brokers/ids/7", "{}", create_mode::ephemeral, true));
  auto options = test::broker_options(connect, 7);
  options.session_timeout = 1000ms;
  auto refused = cluster_registry::start(options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::node_exists);
}

TEST(ClusterRegistry, WaitsForARegistrationLeftByAnEarlierSession) {
  const auto connect = test::fresh_connect();
  auto earlier = open_session(connect);
  ASSERT_TRUE(earlier);
  ASSERT_TRUE(earlier->create("/brokers/ids/7", "{}", create_mode::ephemeral, true));
  // The earlier session ends while the new registry waits (a restarted broker whose old session expires).
  std::thread ender([&] {
    std::this_thread::sleep_for(300ms);
    earlier.reset();
  });
  auto options = test::broker_options(connect, 7);
  options.session_timeout = 4000ms;
  auto registry = cluster_registry::start(options);
  ender.join();
  ASSERT_TRUE(registry) << registry.error().message();
  EXPECT_TRUE(registry.value()->view()->is_live(broker_id{7}));
}

TEST(ClusterRegistry, CreateTopicGetsLeadersFromTheController) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });

  auto assignment = assign_replicas(ids({1, 2}), 3, 2, 0);
  ASSERT_TRUE(assignment);
  auto topic_id = one->topics().create_topic("orders", assignment.value(), {{"cleanup.policy", "compact"}});
  ASSERT_TRUE(topic_id) << topic_id.error().message();

  for (auto* r : {one.get(), two.get()}) {
    const auto view = await(*r, [](const cluster_view& v) { return has_leaders(v, "orders"); });
    const auto& topic = view->topics.at("orders");
    EXPECT_EQ(topic.topic_id, topic_id.value());
    EXPECT_EQ(topic.config, (layout::config_map{{"cleanup.policy", "compact"}}));
    ASSERT_EQ(topic.partitions.size(), 3u);
    for (const auto& [p, info] : topic.partitions) {
      EXPECT_EQ(info.replicas, assignment.value().at(p));
      EXPECT_EQ(info.state->leader, info.replicas.front());
      EXPECT_EQ(info.state->isr, info.replicas);  // every live replica starts in sync, as in Kafka
      EXPECT_EQ(info.state->epoch, leader_epoch{0});
    }
  }

  // The znodes are Kafka's.
  auto zk = open_session(connect);
  ASSERT_TRUE(zk);
  const auto topic_node = json::parse(zk->get("/brokers/topics/orders").value().data);
  EXPECT_EQ(topic_node["version"], 3);
  EXPECT_EQ(topic_node["topic_id"], topic_id.value().to_string());
  EXPECT_EQ(topic_node["partitions"]["0"], json::array({1, 2}));
  const auto state = json::parse(zk->get("/brokers/topics/orders/partitions/0/state").value().data);
  EXPECT_EQ(state["leader"], 1);
  EXPECT_EQ(state["isr"], json::array({1, 2}));
  EXPECT_EQ(state["controller_epoch"], std::stoi(zk->get("/controller_epoch").value().data));
  const auto config = json::parse(zk->get("/config/topics/orders").value().data);
  EXPECT_EQ(config, json::parse(R"({"version":1,"config":{"cleanup.policy":"compact"}})"));
}

TEST(ClusterRegistry, CreateTopicRejectsDuplicatesAndBadInput) {
  const auto connect = test::fresh_connect();
  auto broker = start_broker(connect, 1);
  ASSERT_TRUE(broker);
  const layout::replica_assignment one_partition = {{partition_id{0}, ids({1})}};
  ASSERT_TRUE(broker->topics().create_topic("t", one_partition, {}));
  EXPECT_EQ(broker->topics().create_topic("t", one_partition, {}).error(), errc::node_exists);
  EXPECT_EQ(broker->topics().create_topic("bad/name", one_partition, {}).error(), errc::invalid_argument);
  EXPECT_EQ(broker->topics().create_topic("gap", {{partition_id{1}, ids({1})}}, {}).error(), errc::invalid_argument);
  EXPECT_EQ(broker->topics().create_topic("dup", {{partition_id{0}, ids({1, 1})}}, {}).error(), errc::invalid_argument);
  EXPECT_EQ(broker->topics().create_topic("empty", {}, {}).error(), errc::invalid_argument);
}

TEST(ClusterRegistry, TopicConfigChangesReachEveryBroker) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  ASSERT_TRUE(one->topics().create_topic("logs", {{partition_id{0}, ids({1})}}, {{"retention.ms", "1000"}}));
  await(*two, [](const cluster_view& v) { return v.find_topic("logs") != nullptr; });

  const layout::config_map changed = {{"retention.ms", "2000"}, {"segment.bytes", "1048576"}};
  ASSERT_TRUE(one->topics().set_topic_config("logs", changed));
  for (auto* r : {one.get(), two.get()}) {
    await(*r, [&](const cluster_view& v) { return v.find_topic("logs") && v.find_topic("logs")->config == changed; });
  }
  auto zk = open_session(connect);
  ASSERT_TRUE(zk);
  const auto changes = zk->get_children("/config/changes").value();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_TRUE(changes[0].starts_with("config_change_"));
  EXPECT_EQ(json::parse(zk->get("/config/changes/" + changes[0]).value().data),
            json::parse(R"({"version":2,"entity_path":"topics/logs"})"));

  EXPECT_EQ(one->topics().set_topic_config("unknown", changed).error(), errc::no_node);
}

// Users' config entities (/config/users/<sanitized name>, Kafka's layout) reach every broker's view by their
// name, through the config change notifications, and a user whose node is deleted leaves it.
TEST(ClusterRegistry, UserConfigsReachEveryBroker) {
  const auto connect = test::fresh_connect();
  auto zk = open_session(connect);
  auto one = start_broker(connect, 1);
  ASSERT_TRUE(zk && one);
  // Written before broker 2 starts: its first full read finds it.
  ASSERT_TRUE(one->configs().write("users", "early", {{"SCRAM-SHA-256", "salt=x"}}));
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->view()->users.at("early"), (layout::config_map{{"SCRAM-SHA-256", "salt=x"}}));

  const std::string name = "CN=Alice Smith,O=Acme";
  const layout::config_map alice = {{"SCRAM-SHA-512", "salt=y"}, {"producer_byte_rate", "1024"}};
  ASSERT_TRUE(one->configs().write("users", layout::sanitize(name), alice));
  for (auto* r : {one.get(), two.get()}) {
    await(*r, [&](const cluster_view& v) { return v.users.contains(name) && v.users.at(name) == alice; });
  }
  EXPECT_TRUE(zk->get("/config/users/CN%3DAlice%20Smith%2CO%3DAcme"));

  ASSERT_TRUE(zk->remove("/config/users/early"));
  ASSERT_TRUE(zk->create("/config/changes/config_change_", R"({"version":2,"entity_path":"users/early"})",
                         create_mode::persistent_sequential));
  // A user's client quota is no user entity.
  ASSERT_TRUE(zk->create("/config/changes/config_change_", R"({"version":2,"entity_path":"users/bob/clients/app"})",
                         create_mode::persistent_sequential));
  await(*two, [](const cluster_view& v) { return !v.users.contains("early"); });
  EXPECT_EQ(two->view()->users.size(), 1u);
}

// The ACLs (Kafka's layout, coord/acl_layout.h) reach every broker's view through the change notifications:
// those written through a registry, one written by another tool (as Kafka's ZooKeeper-mode authorizer writes
// it), and removals. A node that stops decoding keeps the ACLs known for it.
TEST(ClusterRegistry, AclsReachEveryBroker) {
  using namespace authz;
  const auto connect = test::fresh_connect();
  auto zk = open_session(connect);
  auto one = start_broker(connect, 1);
  ASSERT_TRUE(zk && one);
  const resource_pattern orders{resource_type::topic, "orders", pattern_type::literal};
  const acl_entry alice_writes{"User:alice", "*", operation::write, permission::allow};
  const std::vector<acl_entry> writes{alice_writes};
  ASSERT_TRUE(one->acls().add(orders, writes));  // before broker 2 starts: its first full read finds it
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(two);
  const requester alice{"User:alice", "10.0.0.1"};
  const decision_settings closed;
  EXPECT_TRUE(two->view()->acls->authorize(alice, operation::write, resource_type::topic, "orders", closed));

  const resource_pattern logs{resource_type::topic, "logs-", pattern_type::prefixed};
  const std::vector<acl_entry> reads{{"User:alice", "*", operation::read, permission::allow}};
  ASSERT_TRUE(one->acls().add(logs, reads));
  for (auto* r : {one.get(), two.get()}) {
    await(*r, [&](const cluster_view& v) {
      return v.acls->authorize(alice, operation::read, resource_type::topic, "logs-app", closed);
    });
  }

  // Written by another tool, as Kafka writes it: the node, then the notification.
  ASSERT_TRUE(zk->create("/kafka-acl/Group/billing",
                         R"({"version":1,"acls":[{"principal":"User:bob","permissionType":"Allow",)"
                         R"("operation":"Read","host":"*"}]})",
                         create_mode::persistent, /*make_parents=*/true));
  ASSERT_TRUE(zk->create("/kafka-acl-changes/acl_changes_", "Group:billing", create_mode::persistent_sequential));
  const requester bob{"User:bob", "10.0.0.2"};
  await(*two, [&](const cluster_view& v) {
    return v.acls->authorize(bob, operation::read, resource_type::group, "billing", closed);
  });

  ASSERT_TRUE(one->acls().remove_if(orders, [](const acl_entry&) { return true; }));
  await(*two, [&](const cluster_view& v) {
    return !v.acls->authorize(alice, operation::write, resource_type::topic, "orders", closed);
  });
  EXPECT_EQ(two->view()->acls->size(), 2U);

  ASSERT_TRUE(zk->set("/kafka-acl/Group/billing", "not json"));
  ASSERT_TRUE(zk->create("/kafka-acl-changes/acl_changes_", "Group:billing", create_mode::persistent_sequential));
  ASSERT_TRUE(one->acls().add(orders, writes));  // announced after the bad node: seen once that was handled
  await(*two, [&](const cluster_view& v) {
    return v.acls->authorize(alice, operation::write, resource_type::topic, "orders", closed);
  });
  EXPECT_TRUE(two->view()->acls->authorize(bob, operation::read, resource_type::group, "billing", closed));
}

TEST(ClusterRegistry, DeleteTopicRemovesItsNodes) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });
  ASSERT_TRUE(one->topics().create_topic("doomed", assign_replicas(ids({1, 2}), 4, 2, 1).value(), {{"a", "b"}}));
  ASSERT_TRUE(one->topics().create_topic("kept", {{partition_id{0}, ids({2})}}, {}));
  await(*two, [](const cluster_view& v) { return has_leaders(v, "doomed") && has_leaders(v, "kept"); });

  ASSERT_TRUE(two->topics().delete_topic("doomed"));
  EXPECT_TRUE(two->topics().delete_topic("doomed"));  // already marked: fine
  // The topic stays, marked, until both of its live replicas have deleted their logs; a topic created after the
  // marker, led once the controller has passed over it, shows that it waited.
  ASSERT_TRUE(one->topics().create_topic("later", {{partition_id{0}, ids({1})}}, {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "later"); });
  ASSERT_TRUE(one->acknowledge_deletion("doomed"));
  ASSERT_TRUE(one->topics().create_topic("later-still", {{partition_id{0}, ids({1})}}, {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "later-still"); });
  for (auto* r : {one.get(), two.get()}) {
    const auto* doomed = r->view()->find_topic("doomed");
    ASSERT_NE(doomed, nullptr);
    EXPECT_TRUE(doomed->marked_for_deletion);
  }
  ASSERT_TRUE(two->acknowledge_deletion("doomed"));
  for (auto* r : {one.get(), two.get()}) {
    const auto view = await(*r, [](const cluster_view& v) { return v.find_topic("doomed") == nullptr; });
    EXPECT_NE(view->find_topic("kept"), nullptr);
  }
  auto zk = open_session(connect);
  ASSERT_TRUE(zk);
  EXPECT_TRUE(test::eventually([&] { return !zk->exists("/admin/delete_topics/doomed").value(); }));
  EXPECT_FALSE(zk->exists("/brokers/topics/doomed").value());
  EXPECT_FALSE(zk->exists("/config/topics/doomed").value());
  EXPECT_EQ(two->topics().delete_topic("doomed").error(), errc::no_node);

  // The name can be used again.
  ASSERT_TRUE(one->topics().create_topic("doomed", {{partition_id{0}, ids({1})}}, {}));
  await(*two, [](const cluster_view& v) { return has_leaders(v, "doomed") && v.find_topic("doomed")->config.empty(); });
}

TEST(ClusterRegistry, AReplicaThatIsDownDoesNotHoldADeletionUp) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  ASSERT_TRUE(one);
  // Broker 2 is not running: only broker 1 is waited for.
  ASSERT_TRUE(one->topics().create_topic("doomed", {{partition_id{0}, ids({1, 2})}}, {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "doomed"); });
  ASSERT_TRUE(one->topics().delete_topic("doomed"));
  ASSERT_TRUE(one->acknowledge_deletion("doomed"));
  await(*one, [](const cluster_view& v) { return v.find_topic("doomed") == nullptr; });
}

TEST(ClusterRegistry, ControllerFailsOver) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2 && v.controller != no_broker; });
  auto zk = open_session(connect);
  ASSERT_TRUE(zk);
  const int epoch_before = std::stoi(zk->get("/controller_epoch").value().data);

  auto& controller = one->is_controller() ? one : two;
  auto& survivor = one->is_controller() ? two : one;
  const broker_id survivor_id = survivor->id();
  controller.reset();

  const auto view = await(*survivor, [&](const cluster_view& v) { return v.controller == survivor_id; });
  EXPECT_TRUE(survivor->is_controller());
  EXPECT_EQ(std::stoi(zk->get("/controller_epoch").value().data), epoch_before + 1);
  EXPECT_EQ(json::parse(zk->get("/controller").value().data)["brokerid"], survivor_id.value());

  // The new controller does the work.
  ASSERT_TRUE(survivor->topics().create_topic("after", {{partition_id{0}, {survivor_id}}}, {}));
  await(*survivor, [](const cluster_view& v) { return has_leaders(v, "after"); });
}

TEST(ClusterRegistry, ElectsOnlyFromTheIsrAndWaitsForIt) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);  // stays up: the controller after the others go
  auto two = start_broker(connect, 2);
  auto three = start_broker(connect, 3);
  ASSERT_TRUE(one && two && three);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 3; });
  ASSERT_TRUE(one->topics().create_topic("t", {{partition_id{0}, ids({2, 3})}}, {}));
  auto view = await(*one, [](const cluster_view& v) { return has_leaders(v, "t"); });
  EXPECT_EQ(state_of(*view, "t", 0)->leader, broker_id{2});
  EXPECT_EQ(state_of(*view, "t", 0)->isr, ids({2, 3}));

  // The leader dies: the next replica in the ISR takes over and the ISR shrinks to it.
  two.reset();
  view = await(*one, [](const cluster_view& v) { return state_of(v, "t", 0)->leader == broker_id{3}; });
  EXPECT_EQ(state_of(*view, "t", 0)->epoch, leader_epoch{1});
  EXPECT_EQ(state_of(*view, "t", 0)->isr, ids({3}));

  // The last in-sync replica dies: no leader, the ISR remembers it.
  three.reset();
  view = await(*one, [](const cluster_view& v) { return state_of(v, "t", 0)->leader == no_broker; });
  EXPECT_EQ(state_of(*view, "t", 0)->epoch, leader_epoch{2});
  EXPECT_EQ(state_of(*view, "t", 0)->isr, ids({3}));

  // Broker 2 is back but not in sync: no unclean election.
  two = start_broker(connect, 2);
  ASSERT_TRUE(two);
  view = await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });
  // The controller has handled the broker change once the view has it; nothing changed for the partition.
  await(*two, [](const cluster_view& v) { return v.brokers.size() == 2 && state_of(v, "t", 0) != nullptr; });
  EXPECT_EQ(state_of(*one->view(), "t", 0)->leader, no_broker);

  // The in-sync replica returns and leads again.
  three = start_broker(connect, 3);
  ASSERT_TRUE(three);
  view = await(*one, [](const cluster_view& v) { return state_of(v, "t", 0)->leader == broker_id{3}; });
  EXPECT_EQ(state_of(*view, "t", 0)->epoch, leader_epoch{3});
  EXPECT_EQ(state_of(*view, "t", 0)->isr, ids({3}));
}

// unclean.leader.election.enable (a topic override here) lets a live replica that is not in sync lead when
// no in-sync one is alive; without it the partition waits (ElectsOnlyFromTheIsrAndWaitsForIt).
TEST(ClusterRegistry, UncleanElectionWhenTheTopicAllowsIt) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });
  // Created while broker 3 is down, so it is not in sync when it registers.
  ASSERT_TRUE(one->topics().create_topic("strict", {{partition_id{0}, ids({2, 3})}}, {}));
  ASSERT_TRUE(one->topics().create_topic("lenient", {{partition_id{0}, ids({2, 3})}},
                                         {{"unclean.leader.election.enable", "true"}}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "strict") && has_leaders(v, "lenient"); });
  auto three = start_broker(connect, 3);
  ASSERT_TRUE(three);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 3; });
  EXPECT_EQ(state_of(*one->view(), "strict", 0)->isr, ids({2}));
  two.reset();  // the only in-sync replica of both
  const auto view = await(*one, [](const cluster_view& v) {
    return state_of(v, "strict", 0)->leader == no_broker && state_of(v, "lenient", 0)->leader == broker_id{3};
  });
  EXPECT_EQ(state_of(*view, "lenient", 0)->isr, ids({3}));
  EXPECT_EQ(state_of(*view, "lenient", 0)->epoch, leader_epoch{1});
  EXPECT_EQ(state_of(*view, "strict", 0)->isr, ids({2}));
}

TEST(ClusterRegistry, OnlyReplicaLeavesAndReturns) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });
  ASSERT_TRUE(one->topics().create_topic("solo", {{partition_id{0}, ids({2})}}, {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "solo"); });

  two.reset();
  auto view = await(*one, [](const cluster_view& v) { return state_of(v, "solo", 0)->leader == no_broker; });
  EXPECT_EQ(state_of(*view, "solo", 0)->isr, ids({2}));

  two = start_broker(connect, 2);
  ASSERT_TRUE(two);
  view = await(*one, [](const cluster_view& v) { return state_of(v, "solo", 0)->leader == broker_id{2}; });
  EXPECT_EQ(state_of(*view, "solo", 0)->epoch, leader_epoch{2});
}

TEST(ClusterRegistry, DeadFollowersLeaveTheIsrAndLeadersAddThemBack) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });
  ASSERT_TRUE(one->topics().create_topic("r", {{partition_id{0}, ids({1, 2})}}, {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "r"); });
  const topic_partition tp{"r", partition_id{0}};
  ASSERT_TRUE(one->alter_isr(tp, *state_of(*one->view(), "r", 0), ids({1, 2})));
  await(*one, [](const cluster_view& v) { return state_of(v, "r", 0)->isr == ids({1, 2}); });

  two.reset();
  auto view = await(*one, [](const cluster_view& v) { return state_of(v, "r", 0)->isr == ids({1}); });
  EXPECT_EQ(state_of(*view, "r", 0)->epoch, leader_epoch{0});  // same leader, same epoch

  two = start_broker(connect, 2);
  ASSERT_TRUE(two);
  // The write is conditional on the state the leader read: one from before the follower left is stale.
  auto current = *state_of(*view, "r", 0);
  auto stale = current;
  --stale.zk_version;
  EXPECT_EQ(one->alter_isr(tp, stale, ids({1, 2})).error(), errc::bad_version);
  auto altered = one->alter_isr(tp, current, ids({1, 2}));
  ASSERT_TRUE(altered) << altered.error().message();
  // Both brokers learn it from the change log, the leader's own view included.
  for (auto* r : {one.get(), two.get()}) {
    view = await(*r, [](const cluster_view& v) {
      return state_of(v, "r", 0) && state_of(v, "r", 0)->isr == ids({1, 2});
    });
    EXPECT_EQ(state_of(*view, "r", 0)->zk_version, current.zk_version + 1);
  }
}

// The paths a ZooKeeper session watches, from the server's "wchc" ("0x<session>" lines, each followed by its
// paths indented with a tab).
std::vector<std::string> watched_paths(std::int64_t session_id) {
  std::ostringstream hex;
  hex << "0x" << std::hex << session_id;
  std::istringstream answer(test::shared_server().four_letter_word("wchc"));
  std::vector<std::string> paths;
  bool ours = false;
  for (std::string line; std::getline(answer, line);) {
    if (line.empty()) continue;
    if (line[0] != '\t') {
      ours = line == hex.str();
    } else if (ours) {
      paths.push_back(line.substr(1));
    }
  }
  return paths;
}

std::size_t state_change_count(zk_session& zk) {
  auto children = zk.get_children(std::string(layout::partition_state_changes_path));
  return children ? children.value().size() : 0;
}

// Brokers learn partition states from the change log, not from a watch per partition, and a broker failure's
// elections reach them in one change log node per slice of partitions.
TEST(ClusterRegistry, PartitionStatesReachBrokersWithoutAWatchPerPartition) {
  constexpr std::int32_t partitions = 60;
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  auto zk = open_session(connect);
  ASSERT_TRUE(one && two && zk);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });
  auto assignment = assign_replicas(ids({1, 2}), partitions, 2, 0);
  ASSERT_TRUE(assignment);
  ASSERT_TRUE(one->topics().create_topic("wide", assignment.value(), {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "wide"); });
  auto view = await(*two, [](const cluster_view& v) { return has_leaders(v, "wide"); });
  // Each leader adds its follower to the ISR.
  for (std::int32_t p = 0; p < partitions; ++p) {
    const auto& state = *state_of(*view, "wide", p);
    auto& leader = state.leader == broker_id{1} ? one : two;
    ASSERT_TRUE(leader->alter_isr({"wide", partition_id{p}}, state, ids({1, 2})));
  }
  const auto all_in_sync = [](const cluster_view& v) {
    for (std::int32_t p = 0; p < partitions; ++p) {
      if (state_of(v, "wide", p)->isr.size() != 2) return false;
    }
    return true;
  };
  await(*one, all_in_sync);
  await(*two, all_in_sync);
  for (auto* r : {one.get(), two.get()}) {
    const auto paths = watched_paths(r->session_credentials().session_id);
    EXPECT_FALSE(paths.empty()) << "wchc found no watches of broker " << r->id();
    EXPECT_LE(paths.size(), 8u) << "broker " << r->id() << " watches " << paths.size() << " paths for " << partitions
                                << " partitions";
    for (const auto& path : paths) EXPECT_EQ(path.find("/state"), std::string::npos) << path;
  }

  // Broker 2 dies: broker 1 leads every partition, written in one multi-op with one change log node.
  const auto logged_before = state_change_count(*zk);
  two.reset();
  view = await(*one, [](const cluster_view& v) {
    for (std::int32_t p = 0; p < partitions; ++p) {
      if (state_of(v, "wide", p)->leader != broker_id{1} || state_of(v, "wide", p)->isr != ids({1})) return false;
    }
    return true;
  });
  EXPECT_EQ(state_change_count(*zk), logged_before + 1);
  // A broker that starts reads every state znode, not the log, and has what the controller has (whose copy of
  // its own writes gets their exact zxids from the log).
  two = start_broker(connect, 2);
  ASSERT_TRUE(two);
  const auto read = two->view()->topics.at("wide");
  await(*one, [&](const cluster_view& v) { return v.topics.at("wide") == read; });
}

std::unique_ptr<cluster_registry> start_balancing_broker(const std::string& connect, std::int32_t id, bool automatic) {
  auto options = test::broker_options(connect, id);
  options.auto_leader_rebalance = automatic;
  options.leader_imbalance_check_interval = 100ms;
  options.leader_imbalance_percentage = 0;
  auto registry = cluster_registry::start(options);
  EXPECT_TRUE(registry) << "broker " << id << ": " << registry.error().message();
  return registry ? std::move(registry).value() : nullptr;
}

// Leadership moved to broker 2 when broker 1 died; broker 1 is back and in sync again.
struct moved_leadership {
  std::unique_ptr<cluster_registry> one;
  std::unique_ptr<cluster_registry> two;  // the controller and the leader
};

moved_leadership move_leadership_away(const std::string& connect, bool automatic) {
  moved_leadership c{start_balancing_broker(connect, 1, automatic), start_balancing_broker(connect, 2, automatic)};
  const topic_partition tp{"p", partition_id{0}};
  EXPECT_TRUE(c.one->topics().create_topic("p", {{partition_id{0}, ids({1, 2})}}, {}));
  auto view = await(*c.one, [](const cluster_view& v) { return has_leaders(v, "p"); });
  EXPECT_TRUE(c.one->alter_isr(tp, *state_of(*view, "p", 0), ids({1, 2})));
  await(*c.two, [](const cluster_view& v) { return state_of(v, "p", 0) && state_of(v, "p", 0)->isr.size() == 2; });
  c.one.reset();
  view = await(*c.two, [](const cluster_view& v) { return state_of(v, "p", 0)->leader == broker_id{2}; });
  EXPECT_TRUE(c.two->is_controller());
  c.one = start_balancing_broker(connect, 1, automatic);
  return c;
}

TEST(ClusterRegistry, ElectLeadersMovesLeadershipToThePreferredReplica) {
  const auto connect = test::fresh_connect();
  auto [one, two] = move_leadership_away(connect, false);
  ASSERT_TRUE(one && two);
  const topic_partition tp{"p", partition_id{0}};
  const std::vector<topic_partition> asked = {tp, {"p", partition_id{9}}, {"nope", partition_id{0}}};

  EXPECT_EQ(one->elect_leaders(election_type::preferred, asked, wait_time).error(), errc::not_controller);
  auto elected = two->elect_leaders(election_type::preferred, asked, wait_time);
  ASSERT_TRUE(elected) << elected.error().message();
  ASSERT_EQ(elected.value().size(), 3u);
  EXPECT_EQ(elected.value()[0].error, errc::preferred_leader_not_available);  // broker 1 is not in sync yet
  EXPECT_EQ(elected.value()[1].error, errc::no_node);
  EXPECT_EQ(elected.value()[2].error, errc::no_node);

  auto view = await(*two, [](const cluster_view& v) { return v.brokers.size() == 2; });
  ASSERT_TRUE(two->alter_isr(tp, *state_of(*view, "p", 0), ids({2, 1})));
  await(*two, [](const cluster_view& v) { return state_of(v, "p", 0)->isr.size() == 2; });
  elected = two->elect_leaders(election_type::preferred, std::nullopt, wait_time);
  ASSERT_TRUE(elected);
  ASSERT_EQ(elected.value().size(), 1u);
  EXPECT_EQ(elected.value()[0].partition, tp);
  EXPECT_FALSE(elected.value()[0].error) << elected.value()[0].error.message();
  for (auto* r : {one.get(), two.get()}) {
    view = await(*r, [](const cluster_view& v) { return state_of(v, "p", 0)->leader == broker_id{1}; });
    EXPECT_EQ(state_of(*view, "p", 0)->epoch, leader_epoch{2});
    EXPECT_EQ(state_of(*view, "p", 0)->isr, ids({2, 1}));
  }
  EXPECT_EQ(two->elect_leaders(election_type::preferred, asked, wait_time).value()[0].error, errc::election_not_needed);
  EXPECT_EQ(two->elect_leaders(election_type::unclean, asked, wait_time).value()[0].error, errc::election_not_needed);
}

TEST(ClusterRegistry, TheControllerRebalancesLeadersByItself) {
  const auto connect = test::fresh_connect();
  auto [one, two] = move_leadership_away(connect, true);
  ASSERT_TRUE(one && two);
  // Out of sync, broker 1 cannot take its partition back.
  auto view = await(*two, [](const cluster_view& v) { return v.brokers.size() == 2; });
  EXPECT_EQ(state_of(*view, "p", 0)->leader, broker_id{2});
  ASSERT_TRUE(two->alter_isr({"p", partition_id{0}}, *state_of(*view, "p", 0), ids({2, 1})));
  view = await(*one, [](const cluster_view& v) { return state_of(v, "p", 0)->leader == broker_id{1}; });
  EXPECT_EQ(state_of(*view, "p", 0)->epoch, leader_epoch{2});
}

// A broker in a controlled shutdown asks the controller to move its leaderships; the controller hands each to
// the next in-sync replica (epoch + 1) and takes the broker out of every ISR. A partition nobody else can lead
// stays with it.
TEST(ClusterRegistry, ControlledShutdownMovesLeadershipAway) {
  const auto connect = test::fresh_connect();
  std::vector<std::unique_ptr<cluster_registry>> brokers;
  for (std::int32_t id = 1; id <= 3; ++id) brokers.push_back(start_broker(connect, id));
  for (const auto& b : brokers) ASSERT_TRUE(b);
  await(*brokers[0], [](const cluster_view& v) { return v.brokers.size() == 3; });
  layout::replica_assignment assignment;
  for (std::int32_t p = 0; p < 3; ++p) assignment[partition_id{p}] = ids({1 + p, 1 + (p + 1) % 3, 1 + (p + 2) % 3});
  ASSERT_TRUE(brokers[0]->topics().create_topic("cs", assignment, {}));
  ASSERT_TRUE(brokers[0]->topics().create_topic("solo", {{partition_id{0}, ids({1})}}, {}));
  for (const auto& b : brokers) await(*b, [](const cluster_view& v) { return has_leaders(v, "cs"); });
  for (std::int32_t p = 0; p < 3; ++p) {
    auto& leader = brokers[static_cast<std::size_t>(p)];
    const auto view = await(*leader, [](const cluster_view& v) { return has_leaders(v, "cs"); });
    ASSERT_TRUE(leader->alter_isr({"cs", partition_id{p}}, *state_of(*view, "cs", p), ids({1, 2, 3})));
  }
  await(*brokers[1], [](const cluster_view& v) {
    return has_leaders(v, "solo") &&
           std::all_of(v.topics.at("cs").partitions.begin(), v.topics.at("cs").partitions.end(),
                       [](const auto& e) { return e.second.state->isr.size() == 3; });
  });

  auto done = brokers[0]->controlled_shutdown(3, wait_time);
  ASSERT_TRUE(done) << done.error().message();
  for (const auto& b : brokers) {
    const auto view = await(*b, [](const cluster_view& v) { return state_of(v, "cs", 0)->leader == broker_id{2}; });
    EXPECT_EQ(view->shutting_down, std::set<broker_id>{broker_id{1}});
    EXPECT_EQ(state_of(*view, "cs", 0)->epoch, leader_epoch{1});
    for (std::int32_t p = 0; p < 3; ++p) {
      const auto& isr = state_of(*view, "cs", p)->isr;
      EXPECT_EQ(std::count(isr.begin(), isr.end(), broker_id{1}), 0) << "partition " << p;
      EXPECT_EQ(isr.size(), 2u);
    }
    EXPECT_EQ(state_of(*view, "solo", 0)->leader, broker_id{1});
  }
  // Gone, it leaves the mark behind with its session; back, it is no longer shutting down.
  brokers[0].reset();
  await(*brokers[1], [](const cluster_view& v) { return v.shutting_down.empty() && v.brokers.size() == 2; });
}

TEST(ClusterRegistry, AddPartitions) {
  const auto connect = test::fresh_connect();
  auto broker = start_broker(connect, 1);
  ASSERT_TRUE(broker);
  const auto brokers = ids({1});
  const auto initial = assign_replicas(brokers, 2, 1, 0).value();
  const auto topic_id = broker->topics().create_topic("grow", initial, {}).value();
  await(*broker, [](const cluster_view& v) { return has_leaders(v, "grow"); });

  auto grown = initial;
  grown.merge(assign_replicas(brokers, 2, 1, 0, 2).value());
  ASSERT_EQ(grown.size(), 4u);
  ASSERT_TRUE(broker->topics().add_partitions("grow", grown));
  const auto view = await(*broker, [](const cluster_view& v) {
    return has_leaders(v, "grow") && v.topics.at("grow").partitions.size() == 4;
  });
  EXPECT_EQ(view->topics.at("grow").topic_id, topic_id);

  EXPECT_EQ(broker->topics().add_partitions("grow", initial).error(), errc::invalid_argument);  // shrinking
  auto moved = grown;
  moved[partition_id{4}] = ids({1});
  moved[partition_id{0}] = ids({2});
  EXPECT_EQ(broker->topics().add_partitions("grow", moved).error(), errc::invalid_argument);  // reassigning
  EXPECT_EQ(broker->topics().add_partitions("missing", grown).error(), errc::no_node);
}

TEST(ClusterRegistry, AssignsIdsToTopicsWrittenWithoutOne) {
  const auto connect = test::fresh_connect();
  auto broker = start_broker(connect, 1);
  auto zk = open_session(connect);
  ASSERT_TRUE(broker && zk);
  // An operator or an old Kafka tool writes a version 1 topic node.
  ASSERT_TRUE(zk->create("/brokers/topics/legacy", R"({"version":1,"partitions":{"0":[1]}})", create_mode::persistent));
  const auto view = await(*broker, [](const cluster_view& v) {
    return has_leaders(v, "legacy") && !v.topics.at("legacy").topic_id.is_zero();
  });
  const auto node = json::parse(zk->get("/brokers/topics/legacy").value().data);
  EXPECT_EQ(node["version"], 3);
  EXPECT_EQ(node["topic_id"], view->topics.at("legacy").topic_id.to_string());
}

// A topic znode that cannot be used stays in the view, marked invalid and without partitions (so without
// leaders), and nothing rewrites it; fixed, it is a topic again. Dropping it from the view would tell every
// broker that the topic is gone.
TEST(ClusterRegistry, KeepsUnusableTopicNodesAsInvalid) {
  const auto connect = test::fresh_connect();
  auto broker = start_broker(connect, 1);
  auto zk = open_session(connect);
  ASSERT_TRUE(broker && zk);
  const std::pair<const char*, const char*> broken[] = {
      {"garbage", "not json"},
      {"empty", R"({"version":3,"partitions":{}})"},
      {"twice", R"({"version":3,"partitions":{"0":[1,1]}})"},
      {"nobody", R"({"version":3,"partitions":{"0":[]}})"},
  };
  for (const auto& [name, data] : broken)
    ASSERT_TRUE(zk->create(std::string("/brokers/topics/") + name, data, create_mode::persistent));
  ASSERT_TRUE(broker->topics().create_topic("fine", {{partition_id{0}, ids({1})}}, {}));
  const auto view = await(*broker, [&](const cluster_view& v) {
    if (!has_leaders(v, "fine")) return false;
    for (const auto& [name, data] : broken)
      if (v.find_topic(name) == nullptr) return false;
    return true;
  });
  for (const auto& [name, data] : broken) {
    const auto* topic = view->find_topic(name);
    ASSERT_NE(topic, nullptr) << name;
    EXPECT_FALSE(topic->valid()) << name;
    EXPECT_FALSE(topic->invalid.empty()) << name;
    EXPECT_TRUE(topic->partitions.empty()) << name;
    // The controller neither assigned an id (a rewrite) nor created partition states.
    EXPECT_EQ(zk->get(std::string("/brokers/topics/") + name).value().data, data) << name;
    EXPECT_FALSE(zk->exists(std::string("/brokers/topics/") + name + "/partitions").value()) << name;
  }
  ASSERT_TRUE(zk->set("/brokers/topics/garbage", R"({"version":1,"partitions":{"0":[1]}})"));
  const auto fixed = await(*broker, [](const cluster_view& v) { return has_leaders(v, "garbage"); });
  EXPECT_TRUE(fixed->find_topic("garbage")->valid());
}

TEST(ClusterRegistry, ProducerIdBlocksAreDisjoint) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  std::vector<layout::producer_id_block> blocks[2];
  std::thread racers[2];
  cluster_registry* registries[2] = {one.get(), two.get()};
  for (int i = 0; i < 2; ++i) {
    racers[i] = std::thread([&, i] {
      for (int n = 0; n < 10; ++n) {
        auto block = registries[i]->allocate_producer_id_block();
        ASSERT_TRUE(block) << block.error().message();
        blocks[i].push_back(block.value());
      }
    });
  }
  for (auto& t : racers) t.join();

  std::vector<layout::producer_id_block> all;
  for (int i = 0; i < 2; ++i) {
    for (const auto& b : blocks[i]) {
      EXPECT_EQ(b.broker, registries[i]->id());
      EXPECT_EQ(b.last - b.first + 1, 1000);
      all.push_back(b);
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_EQ(all.size(), 20u);
  EXPECT_EQ(all.front().first, 0);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_EQ(all[i].first, all[i - 1].last + 1);
}

TEST(ClusterRegistry, ListenersRunOnTheWorkerThread) {
  // Declared before the broker, so they outlive its worker thread, which may call the listener until it stops.
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> calls{0};
  std::atomic<bool> saw_topic{false};
  const auto connect = test::fresh_connect();
  auto broker = start_broker(connect, 1);
  ASSERT_TRUE(broker);
  broker->add_listener([&](const std::shared_ptr<const cluster_view>& v) {
    {
      std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    ++calls;
    if (has_leaders(*v, "heard")) saw_topic = true;
  });
  ASSERT_TRUE(test::eventually([&] { return calls.load() >= 1; }));  // called with the current view first
  ASSERT_TRUE(broker->topics().create_topic("heard", {{partition_id{0}, ids({1})}}, {}));
  ASSERT_TRUE(test::eventually([&] { return saw_topic.load(); }));
  std::lock_guard lock(mutex);
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_FALSE(threads.contains(std::this_thread::get_id()));
}

TEST(ClusterRegistry, SurvivesSessionExpiry) {
  const auto connect = test::fresh_connect();
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*two, [](const cluster_view& v) { return v.brokers.size() == 2; });
  const auto epoch_before = two->view()->brokers.at(broker_id{1}).epoch;

  auto spy = open_session(connect);
  ASSERT_TRUE(spy);
  const auto owner = spy->exists("/brokers/ids/1").value()->ephemeral_owner;
  testing::expire_session(connect, one->session_credentials());

  // Broker 1 comes back under a new session (a new broker epoch) without a restart ...
  await(*two, [&](const cluster_view& v) {
    return v.is_live(broker_id{1}) && v.brokers.at(broker_id{1}).epoch != epoch_before;
  });
  EXPECT_NE(spy->exists("/brokers/ids/1").value()->ephemeral_owner, owner);
  // ... and its view keeps following the cluster.
  ASSERT_TRUE(two->topics().create_topic("after-expiry", {{partition_id{0}, ids({1})}}, {}));
  await(*one, [](const cluster_view& v) { return has_leaders(v, "after-expiry"); });
  await(*one, [](const cluster_view& v) { return v.controller != no_broker; });
}

TEST(ClusterRegistry, SurvivesAZooKeeperRestart) {
  testing::zookeeper_server server;
  const auto connect = server.connect_string() + "/restart";
  auto one = start_broker(connect, 1);
  auto two = start_broker(connect, 2);
  ASSERT_TRUE(one && two);
  await(*one, [](const cluster_view& v) { return v.brokers.size() == 2; });

  server.stop();
  server.restart();

  // Calls wait for the reconnect; watches carry over (or are set again after an expiry).
  ASSERT_TRUE(one->topics().create_topic("after-restart", {{partition_id{0}, ids({2})}}, {}));
  for (auto* r : {one.get(), two.get()}) {
    await(*r, [](const cluster_view& v) { return has_leaders(v, "after-restart") && v.brokers.size() == 2; });
  }
}

TEST(ClusterRegistry, StartFailsClearlyWithoutZooKeeper) {
  auto options = test::broker_options("127.0.0.1:1", 1);
  options.connect_timeout = 500ms;
  auto registry = cluster_registry::start(options);
  ASSERT_FALSE(registry);
  EXPECT_EQ(registry.error(), errc::timeout);
}

}  // namespace
}  // namespace ferry::coord
