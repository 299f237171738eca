// Partition reassignment (KIP-455): the assignment a move writes, and the controller completing it once every
// target replica is in sync.
#include "coord/reassignment.h"

#include <gtest/gtest.h>

#include "coord/cluster_registry.h"
#include "coord/layout.h"
#include "coord/tests/zk_test_support.h"

namespace ferry::coord {
namespace {

using namespace std::chrono_literals;

std::vector<broker_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<broker_id> out;
  for (const auto v : values) out.emplace_back(v);
  return out;
}

TEST(Reassignment, AMoveListsTheTargetFirstAndWhatIsAddedAndRemoved) {
  const partition_assignment before{ids({1, 2, 3}), {}, {}};
  const auto moving = reassign_to(before, ids({2, 3, 4}));
  EXPECT_EQ(moving, (partition_assignment{ids({2, 3, 4, 1}), ids({4}), ids({1})}));
  EXPECT_EQ(original_replicas(moving), ids({2, 3, 1}));

  // A replication factor change is a move too: up, and down.
  EXPECT_EQ(reassign_to(before, ids({1, 2, 3, 4})), (partition_assignment{ids({1, 2, 3, 4}), ids({4}), {}}));
  EXPECT_EQ(reassign_to(before, ids({1})), (partition_assignment{ids({1, 2, 3}), {}, ids({2, 3})}));
  // Only the order changes: nothing moves, the new order is the assignment.
  EXPECT_EQ(reassign_to(before, ids({3, 1, 2})), (partition_assignment{ids({3, 1, 2}), {}, {}}));
}

TEST(Reassignment, ANewTargetReplacesAMoveInProgressAndTheOriginalsCancelIt) {
  const partition_assignment moving{ids({2, 3, 4, 1}), ids({4}), ids({1})};
  // Broker 4 was being added; the new target drops it and adds 5 instead, against the originals [2,3,1].
  EXPECT_EQ(reassign_to(moving, ids({3, 5})), (partition_assignment{ids({3, 5, 2, 1}), ids({5}), ids({2, 1})}));
  // Back to the original replicas: no reassignment any more.
  EXPECT_EQ(reassign_to(moving, original_replicas(moving)), (partition_assignment{ids({2, 3, 1}), {}, {}}));
}

TEST(Reassignment, ATopicZnodeKeepsEachPartitionsMove) {
  layout::topic_assignment topic;
  topic.partitions = {{partition_id{0}, ids({1, 2})}, {partition_id{1}, ids({2, 3})}};
  set_assignment(topic, partition_id{1}, {ids({3, 4, 2}), ids({4}), ids({2})});
  EXPECT_EQ(assignment_of(topic, partition_id{1}), (partition_assignment{ids({3, 4, 2}), ids({4}), ids({2})}));
  EXPECT_EQ(assignment_of(topic, partition_id{0}), (partition_assignment{ids({1, 2}), {}, {}}));
  set_assignment(topic, partition_id{1}, {ids({3, 4}), {}, {}});
  EXPECT_TRUE(topic.adding.empty());
  EXPECT_TRUE(topic.removing.empty());
}

cluster_view live_view(std::initializer_list<std::int32_t> brokers) {
  cluster_view view;
  for (const auto b : brokers) view.brokers[broker_id{b}] = broker_info{broker_id{b}, "h", 9092, {}, {}, 1};
  return view;
}

TEST(Reassignment, CompletesOnlyWhenEveryTargetIsInSync) {
  const auto view = live_view({1, 2, 3, 4});
  partition_info moving{ids({2, 3, 4, 1}), partition_state{broker_id{1}, leader_epoch{5}, ids({1, 2, 3}), 1, 7, 10},
                        ids({4}), ids({1})};
  EXPECT_FALSE(completed_state(view, moving, 2));

  // Broker 4 caught up: the leader (1) goes, the first target in sync leads in a new epoch, the ISR keeps targets.
  moving.state->isr = ids({1, 2, 3, 4});
  auto done = completed_state(view, moving, 2);
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (layout::leader_and_isr{broker_id{2}, leader_epoch{6}, ids({2, 3, 4}), 2}));

  // A leader that stays keeps its epoch.
  moving.state->leader = broker_id{3};
  done = completed_state(view, moving, 2);
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (layout::leader_and_isr{broker_id{3}, leader_epoch{5}, ids({2, 3, 4}), 2}));

  // A target in the ISR that registered again since the state was written may have lost its log: not yet.
  auto restarted = view;
  restarted.brokers[broker_id{4}].epoch = 11;
  EXPECT_FALSE(completed_state(restarted, moving, 2));
  // Nor while a target is down.
  EXPECT_FALSE(completed_state(live_view({1, 2, 3}), moving, 2));
  // Nothing to complete without a reassignment.
  EXPECT_FALSE(completed_state(view, partition_info{ids({1, 2}), moving.state, {}, {}}, 2));
}

const partition_info* partition_of(const cluster_view& v, const std::string& topic) {
  return v.find_partition({topic, partition_id{0}});
}

// Brokers 1 and 2 run registries (1 is the controller); broker 3 is a registration on a session of the test's.
class reassignment_in_zookeeper : public ::testing::Test {
 protected:
  void SetUp() override {
    connect_ = test::fresh_connect();
    for (const std::int32_t id : {1, 2}) {
      auto registry = cluster_registry::start(test::broker_options(connect_, id));
      ASSERT_TRUE(registry) << registry.error().message();
      registries_.push_back(std::move(registry).value());
    }
    three_ = test::registered_session(connect_, 3);
    ASSERT_TRUE(three_);
    ASSERT_TRUE(await([](const cluster_view& v) { return v.brokers.size() == 3; }));
  }

  cluster_registry& controller() { return *registries_.front(); }

  std::shared_ptr<const cluster_view> await(const std::function<bool(const cluster_view&)>& condition) {
    auto view = controller().wait_for(condition, 15s);
    return view ? view.value() : nullptr;
  }

  std::string connect_;
  std::vector<std::unique_ptr<cluster_registry>> registries_;
  std::unique_ptr<zk_session> three_;
};

TEST_F(reassignment_in_zookeeper, TheControllerCompletesAMoveOnceTheNewReplicaIsInSync) {
  ASSERT_TRUE(controller().topics().create_topic("moved", {{partition_id{0}, ids({1, 2})}}, {}));
  auto view = await([](const cluster_view& v) {
    const auto* p = partition_of(v, "moved");
    return p != nullptr && p->state && p->state->leader == broker_id{1};
  });
  ASSERT_TRUE(view);
  ASSERT_TRUE(controller().alter_isr({"moved", partition_id{0}}, *partition_of(*view, "moved")->state, ids({1, 2})));

  // Move [1,2] to [2,3]: 3 is added, 1 (the leader) is removed once 3 is in sync.
  ASSERT_TRUE(controller().topics().alter_assignment("moved", [](layout::topic_assignment& t) -> result<bool> {
    set_assignment(t, partition_id{0}, reassign_to(assignment_of(t, partition_id{0}), ids({2, 3})));
    return true;
  }));
  view = await([](const cluster_view& v) { return partition_of(v, "moved")->reassigning(); });
  ASSERT_TRUE(view);
  const auto* moving = partition_of(*view, "moved");
  EXPECT_EQ(moving->replicas, ids({2, 3, 1}));
  EXPECT_EQ(moving->adding, ids({3}));
  EXPECT_EQ(moving->removing, ids({1}));
  const auto before = *moving->state;
  EXPECT_EQ(before.leader, broker_id{1});  // nothing happens until broker 3 is in sync

  // The leader adds broker 3 to the ISR once it caught up; the controller then completes the move.
  view = await([](const cluster_view& v) { return partition_of(v, "moved")->state->isr == ids({1, 2}); });
  ASSERT_TRUE(view);
  ASSERT_TRUE(controller().alter_isr({"moved", partition_id{0}}, *partition_of(*view, "moved")->state, ids({1, 2, 3})));
  for (auto& registry : registries_) {
    const auto done = registry->wait_for(
        [](const cluster_view& v) {
          const auto* p = partition_of(v, "moved");
          return !p->reassigning() && p->state->leader == broker_id{2};
        },
        15s);
    ASSERT_TRUE(done) << "not seen by every broker";
    const auto* p = partition_of(*done.value(), "moved");
    EXPECT_EQ(p->replicas, ids({2, 3}));
    EXPECT_EQ(p->state->isr, ids({2, 3}));
    EXPECT_EQ(p->state->epoch, leader_epoch{before.epoch.value() + 1});
  }
  const auto node = three_->get(layout::topic_path("moved"));
  ASSERT_TRUE(node);
  const auto written = layout::decode_topic(node.value().data);
  ASSERT_TRUE(written);
  EXPECT_EQ(assignment_of(written.value(), partition_id{0}), (partition_assignment{ids({2, 3}), {}, {}}));
}

TEST_F(reassignment_in_zookeeper, ACancelledMoveTakesTheAddedReplicaOutOfTheIsr) {
  ASSERT_TRUE(controller().topics().create_topic("back", {{partition_id{0}, ids({1})}}, {}));
  ASSERT_TRUE(await([](const cluster_view& v) {
    const auto* p = partition_of(v, "back");
    return p != nullptr && p->state;
  }));
  // Grow to [1,2,3]; broker 2 joins the ISR; then the move is cancelled before 3 caught up.
  ASSERT_TRUE(controller().topics().alter_assignment("back", [](layout::topic_assignment& t) -> result<bool> {
    set_assignment(t, partition_id{0}, reassign_to(assignment_of(t, partition_id{0}), ids({1, 2, 3})));
    return true;
  }));
  auto view = await([](const cluster_view& v) { return partition_of(v, "back")->reassigning(); });
  ASSERT_TRUE(view);
  ASSERT_TRUE(controller().alter_isr({"back", partition_id{0}}, *partition_of(*view, "back")->state, ids({1, 2})));
  ASSERT_TRUE(await([](const cluster_view& v) { return partition_of(v, "back")->state->isr == ids({1, 2}); }));
  ASSERT_TRUE(controller().topics().alter_assignment("back", [](layout::topic_assignment& t) -> result<bool> {
    const auto current = assignment_of(t, partition_id{0});
    set_assignment(t, partition_id{0}, reassign_to(current, original_replicas(current)));
    return true;
  }));
  view = await([](const cluster_view& v) {
    const auto* p = partition_of(v, "back");
    return !p->reassigning() && p->state->isr == ids({1});
  });
  ASSERT_TRUE(view) << "the cancelled replica stayed in the ISR";
  EXPECT_EQ(partition_of(*view, "back")->replicas, ids({1}));
  EXPECT_EQ(partition_of(*view, "back")->state->leader, broker_id{1});
}

// The reassignment lives in the topic znode, so a controller elected while it is in progress completes it.
TEST_F(reassignment_in_zookeeper, ANewControllerCompletesAMoveInProgress) {
  ASSERT_TRUE(controller().topics().create_topic("handed", {{partition_id{0}, ids({2})}}, {}));
  auto view = await([](const cluster_view& v) {
    const auto* p = partition_of(v, "handed");
    return p != nullptr && p->state && p->state->leader == broker_id{2};
  });
  ASSERT_TRUE(view);
  ASSERT_TRUE(controller().topics().alter_assignment("handed", [](layout::topic_assignment& t) -> result<bool> {
    set_assignment(t, partition_id{0}, reassign_to(assignment_of(t, partition_id{0}), ids({3})));
    return true;
  }));
  auto& survivor = *registries_.back();  // broker 2, the leader
  ASSERT_TRUE(survivor.wait_for([](const cluster_view& v) { return partition_of(v, "handed")->reassigning(); }, 15s));
  registries_.front()->shutdown();  // the controller goes; broker 2 takes over
  registries_.erase(registries_.begin());
  ASSERT_TRUE(survivor.wait_for([](const cluster_view& v) { return v.controller == broker_id{2}; }, 30s));
  // The new controller may write the state itself as it takes over: the leader's change is conditional on the
  // version it read, so it retries on the view that has the newer one, as a leader does.
  ASSERT_TRUE(test::eventually([&] {
    const auto moving = survivor.view();
    return static_cast<bool>(
        survivor.alter_isr({"handed", partition_id{0}}, *partition_of(*moving, "handed")->state, ids({2, 3})));
  }));
  const auto done = survivor.wait_for(
      [](const cluster_view& v) {
        const auto* p = partition_of(v, "handed");
        return !p->reassigning() && p->state->leader == broker_id{3};
      },
      15s);
  ASSERT_TRUE(done) << "the new controller did not complete the move";
  EXPECT_EQ(partition_of(*done.value(), "handed")->replicas, ids({3}));
  EXPECT_EQ(partition_of(*done.value(), "handed")->state->isr, ids({3}));
}

}  // namespace
}  // namespace ferry::coord
