#include "roll/roll_plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "roll/roll_controller.h"

namespace ferry::roll {
namespace {

// Three brokers, all live; topic "t" with partitions of replicas {0,1,2}, {1,2,0}, {2,0,1}, fully in sync.
coord::cluster_view healthy(broker_id controller = broker_id{0}) {
  coord::cluster_view view;
  for (int b = 0; b < 3; ++b) view.brokers[broker_id{b}] = coord::broker_info{.id = broker_id{b}};
  view.controller = controller;
  auto& topic = view.topics["t"];
  for (int p = 0; p < 3; ++p) {
    coord::partition_info info;
    for (int i = 0; i < 3; ++i) info.replicas.push_back(broker_id{(p + i) % 3});
    info.state = coord::partition_state{.leader = info.replicas[0], .isr = info.replicas};
    topic.partitions[partition_id{p}] = info;
  }
  return view;
}

roll_input pods(const std::string& r0, const std::string& r1, const std::string& r2) {
  roll_input in{.update_revision = "new", .replicas = 3, .pods = {}};
  const std::string revisions[] = {r0, r1, r2};
  for (int i = 0; i < 3; ++i)
    in.pods.push_back({.ordinal = i, .name = "b-" + std::to_string(i), .revision = revisions[i], .ready = true});
  return in;
}

TEST(RollPlan, NothingWhenEveryPodIsAtTheUpdateRevision) {
  const auto plan = plan_roll(pods("new", "new", "new"), healthy());
  EXPECT_TRUE(plan.done());
  EXPECT_EQ(plan.updated, 3);
}

TEST(RollPlan, OneAtATimeHighestOrdinalFirstControllerLast) {
  auto plan = plan_roll(pods("old", "old", "old"), healthy(broker_id{2}));
  ASSERT_TRUE(plan.delete_pod);
  EXPECT_EQ(*plan.delete_pod, "b-1");  // 2 is the controller
  EXPECT_EQ(plan.outdated, 3);
  plan = plan_roll(pods("old", "new", "old"), healthy(broker_id{2}));
  EXPECT_EQ(plan.delete_pod.value_or(""), "b-0");
  plan = plan_roll(pods("new", "new", "old"), healthy(broker_id{2}));
  EXPECT_EQ(plan.delete_pod.value_or(""), "b-2");  // the controller, once it is the last
}

TEST(RollPlan, RefusesABrokerWhosePartitionWouldFallBelowMinInsyncReplicas) {
  auto view = healthy(broker_id{0});
  // t-1 (replicas 1,2,0) has ISR {1,2}: broker 0 is behind. Restarting 1 or 2 would leave one in-sync replica.
  view.topics["t"].partitions[partition_id{1}].state->isr = {broker_id{1}, broker_id{2}};
  auto plan = plan_roll(pods("new", "old", "old"), view);
  EXPECT_FALSE(plan.delete_pod);
  EXPECT_NE(plan.why.find("t-"), std::string::npos) << plan.why;
  EXPECT_NE(plan.why.find("has ISR 2 of 3"), std::string::npos) << plan.why;
  // Broker 0 is out of sync for t-1 and in sync elsewhere with full ISRs: restarting it takes nothing away.
  plan = plan_roll(pods("old", "new", "new"), view);
  EXPECT_EQ(plan.delete_pod.value_or(""), "b-0");
  EXPECT_FALSE(roll_blocker(view, broker_id{0}));
  EXPECT_TRUE(roll_blocker(view, broker_id{1}));
}

TEST(RollPlan, AnInSyncReplicaOfADeadBrokerDoesNotCount) {
  auto view = healthy(broker_id{0});
  view.brokers.erase(broker_id{1});  // its session is gone; the ISR in ZooKeeper may not say so yet
  EXPECT_TRUE(roll_blocker(view, broker_id{2}));
}

TEST(RollPlan, UnreadyOutdatedPodsFirst) {
  auto in = pods("old", "old", "old");
  in.pods[0].ready = false;  // crash-looping with the old template
  const auto plan = plan_roll(in, healthy(broker_id{1}));
  EXPECT_EQ(plan.delete_pod.value_or(""), "b-0");
}

TEST(RollPlan, AStartingBrokerIsNeverKilled) {
  auto in = pods("old", "old", "old");
  in.pods[0].ready = false;
  in.pods[0].starting = true;  // recovering its log
  const auto plan = plan_roll(in, healthy(broker_id{1}));
  EXPECT_FALSE(plan.delete_pod);
  EXPECT_EQ(plan.why, "b-0 is starting");
}

TEST(RollPlan, WaitsWhileAnotherPodIsUnreadyTerminatingOrMissing) {
  auto in = pods("old", "new", "old");
  in.pods[1].ready = false;  // the one just restarted, catching up
  auto plan = plan_roll(in, healthy());
  EXPECT_FALSE(plan.delete_pod);
  EXPECT_EQ(plan.why, "b-1 is not ready");
  in.pods[1].terminating = true;
  plan = plan_roll(in, healthy());
  EXPECT_FALSE(plan.delete_pod);
  EXPECT_EQ(plan.why, "b-1 is terminating");
  in.pods.erase(in.pods.begin() + 1);
  plan = plan_roll(in, healthy());
  EXPECT_FALSE(plan.delete_pod);
  EXPECT_EQ(plan.why, "1 broker pods are missing");
}

TEST(RollPlan, WaitsForABrokerThatIsNotRegistered) {
  auto view = healthy();
  view.brokers.erase(broker_id{2});
  const auto plan = plan_roll(pods("old", "old", "new"), view);
  EXPECT_FALSE(plan.delete_pod);
  EXPECT_NE(plan.why.find("not registered"), std::string::npos);
}

TEST(RollPlan, ReadsPodsOfTheStatefulSet) {
  const auto sts = nlohmann::json::parse(R"({"metadata": {"name": "b", "namespace": "ns"}})");
  const auto pod = [](const std::string& json) {
    return std::make_shared<const nlohmann::json>(nlohmann::json::parse(json));
  };
  const auto read = broker_pods(
      sts,
      {
          pod(R"({"metadata": {"name": "b-2", "labels": {"controller-revision-hash": "b-abc"},
            "ownerReferences": [{"kind": "StatefulSet", "name": "b", "controller": true}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "broker", "started": true, "state": {"running": {}}}]}})"),
          pod(R"({"metadata": {"name": "b-0", "deletionTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [{"kind": "StatefulSet", "name": "b", "controller": true}]},
            "status": {"containerStatuses": [{"name": "broker", "started": false, "state": {"running": {}}}]}})"),
          pod(R"({"metadata": {"name": "b-client", "ownerReferences": [{"kind": "StatefulSet", "name": "b", "controller": true}]}})"),
          pod(R"({"metadata": {"name": "b-1"}})"),
      });
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].ordinal, 2);
  EXPECT_EQ(read[0].revision, "b-abc");
  EXPECT_TRUE(read[0].ready);
  EXPECT_FALSE(read[0].starting);
  EXPECT_EQ(read[1].ordinal, 0);
  EXPECT_TRUE(read[1].terminating);
  EXPECT_TRUE(read[1].starting);
  EXPECT_FALSE(read[1].ready);
}

}  // namespace
}  // namespace ferry::roll
