// Brokers that register again (a restart, a new ZooKeeper session) while the partition states still name
// them: the controller treats them as gone and back (Kafka's bounced brokers), and they do not lead on a
// state from before their registration.
#include <gtest/gtest.h>

#include "coord/broker_registration.h"
#include "coord/cluster_registry.h"
#include "coord/errc.h"
#include "coord/layout.h"
#include "coord/tests/zk_test_support.h"

namespace ferry::coord {
namespace {

using namespace std::chrono_literals;

constexpr auto wait_time = 15s;

std::vector<broker_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<broker_id> out;
  for (const auto v : values) out.emplace_back(v);
  return out;
}

const partition_state* state_of(const cluster_view& v, const std::string& topic) {
  const auto* partition = v.find_partition({topic, partition_id{0}});
  return partition != nullptr && partition->state ? &*partition->state : nullptr;
}

std::shared_ptr<const cluster_view> await(cluster_registry& r,
                                          const std::function<bool(const cluster_view&)>& condition) {
  auto view = r.wait_for(condition, wait_time);
  EXPECT_TRUE(view) << "condition not met within " << wait_time.count() << " s";
  return view ? view.value() : r.view();
}

// Broker 3 without a broker process: its registration, made on a session of the test's own, so the test can
// make it return in one multi-op (removed and created again), which the controller can only tell from the
// new czxid.
class returning_broker : public ::testing::Test {
 protected:
  void SetUp() override {
    connect_ = test::fresh_connect();
    one_ = start(1);
    two_ = start(2);
    three_ = test::registered_session(connect_, 3);
    ASSERT_TRUE(three_);
    await(*one_, [](const cluster_view& v) { return v.brokers.size() == 3; });
  }

  std::unique_ptr<cluster_registry> start(std::int32_t id) {
    auto registry = cluster_registry::start(test::broker_options(connect_, id));
    EXPECT_TRUE(registry) << "broker " << id << ": " << registry.error().message();
    return registry ? std::move(registry).value() : nullptr;
  }

  // A topic of one partition on `replicas`, the first leading, with every replica in sync.
  partition_state create_in_sync(const std::string& topic, const std::vector<broker_id>& replicas) {
    EXPECT_TRUE(one_->topics().create_topic(topic, {{partition_id{0}, replicas}}, {}));
    auto view = await(*one_, [&](const cluster_view& v) { return state_of(v, topic) != nullptr; });
    EXPECT_EQ(state_of(*view, topic)->leader, replicas.front());
    if (replicas.size() > 1) {
      EXPECT_TRUE(one_->alter_isr({topic, partition_id{0}}, *state_of(*view, topic), replicas));
      view = await(*one_, [&](const cluster_view& v) { return state_of(v, topic)->isr == replicas; });
    }
    return *state_of(*view, topic);
  }

  // Broker 3 registers again in one step: never absent from /brokers/ids, only its czxid moves on.
  void return_three() {
    const std::string path = layout::broker_path(broker_id{3});
    auto before = three_->get(path);
    ASSERT_TRUE(before);
    const std::vector<zk_op> ops = {zk_op::remove(path),
                                    zk_op::create(path, before.value().data, create_mode::ephemeral)};
    ASSERT_TRUE(three_->multi(ops));
    auto after = three_->get(path);
    ASSERT_TRUE(after);
    ASSERT_GT(after.value().stat.czxid, before.value().stat.czxid);
  }

  std::string connect_;
  std::unique_ptr<cluster_registry> one_;  // the controller: it registered first
  std::unique_ptr<cluster_registry> two_;
  std::unique_ptr<zk_session> three_;
};

TEST_F(returning_broker, AFollowerThatReturnsLeavesTheIsrUntilItsLeaderAddsItBack) {
  const auto before = create_in_sync("f", ids({1, 3}));
  return_three();
  const auto view = await(*one_, [](const cluster_view& v) { return state_of(v, "f")->isr == ids({1}); });
  EXPECT_EQ(state_of(*view, "f")->leader, broker_id{1});
  EXPECT_EQ(state_of(*view, "f")->epoch, before.epoch);  // the leader stays, and so does its epoch
  EXPECT_FALSE(view->registered_since(broker_id{3}, *state_of(*view, "f")));
}

TEST_F(returning_broker, ALeaderThatReturnsHandsOverToAnotherInSyncReplica) {
  const auto before = create_in_sync("l", ids({3, 1, 2}));
  return_three();
  const auto view = await(*one_, [](const cluster_view& v) { return state_of(v, "l")->leader == broker_id{1}; });
  EXPECT_EQ(state_of(*view, "l")->epoch, leader_epoch{before.epoch.value() + 1});
  EXPECT_EQ(state_of(*view, "l")->isr, ids({1, 2}));
  // Other brokers learn it with the zxid of the write, after broker 3's registration.
  const auto seen = await(*two_, [](const cluster_view& v) { return state_of(v, "l")->leader == broker_id{1}; });
  EXPECT_FALSE(seen->registered_since(broker_id{3}, *state_of(*seen, "l")));
  // The controller's own copy holds a lower bound of that zxid until the change log gives it the exact one.
  const auto zxid = state_of(*seen, "l")->written_zxid;
  await(*one_, [&](const cluster_view& v) { return state_of(v, "l")->written_zxid == zxid; });
}

TEST_F(returning_broker, AnOnlyReplicaThatReturnsLeadsAgainInANewEpoch) {
  const auto before = create_in_sync("solo", ids({3}));
  return_three();
  const auto view = await(*one_, [&](const cluster_view& v) { return state_of(v, "solo")->epoch != before.epoch; });
  EXPECT_EQ(state_of(*view, "solo")->leader, broker_id{3});
  EXPECT_EQ(state_of(*view, "solo")->epoch, leader_epoch{before.epoch.value() + 1});
  EXPECT_EQ(state_of(*view, "solo")->isr, ids({3}));
  EXPECT_FALSE(view->registered_since(broker_id{3}, *state_of(*view, "solo")));
}

// register_broker on a session that already holds the node (a restart that resumed its session) creates it
// again, so each run has its own broker epoch.
TEST(BrokerRegistration, RegisteringAgainOnTheSameSessionMakesANewEpoch) {
  zk_session_options options;
  options.connect = test::fresh_connect();
  auto session = zk_session::connect(options);
  ASSERT_TRUE(session) << session.error().message();
  auto& zk = *session.value();
  ASSERT_TRUE(zk.create(std::string(layout::brokers_ids_path), "", create_mode::persistent, true));
  const broker_endpoint self{broker_id{7}, {{"PLAINTEXT", "PLAINTEXT", "broker-7.test", 9097}}, std::nullopt};
  auto registered = register_broker(zk, self, std::nullopt);
  ASSERT_TRUE(registered) << registered.error().message();
  const auto first = zk.get(layout::broker_path(self.id));
  ASSERT_TRUE(first);
  registered = register_broker(zk, self, std::nullopt);
  ASSERT_TRUE(registered) << registered.error().message();
  const auto second = zk.get(layout::broker_path(self.id));
  ASSERT_TRUE(second);
  EXPECT_GT(second.value().stat.czxid, first.value().stat.czxid);
  EXPECT_EQ(second.value().stat.ephemeral_owner, zk.session_id());
}

}  // namespace
}  // namespace ferry::coord
