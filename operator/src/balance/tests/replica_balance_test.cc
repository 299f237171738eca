#include "balance/replica_balance.h"

#include <gtest/gtest.h>

#include "balance/broker_set.h"

namespace ferry::balance {
namespace {

coord::cluster_view brokers(int count, bool racks = true) {
  coord::cluster_view view;
  for (int i = 0; i < count; ++i) {
    coord::broker_info b;
    b.id = broker_id{i};
    if (racks) b.rack = "zone-" + std::to_string(i % 3);
    view.brokers.emplace(b.id, b);
  }
  return view;
}

void add_topic(coord::cluster_view& view, const std::string& name, const std::vector<std::vector<int>>& replicas) {
  auto& topic = view.topics[name];
  for (std::size_t p = 0; p < replicas.size(); ++p) {
    coord::partition_info partition;
    for (const int r : replicas[p]) partition.replicas.push_back(broker_id{r});
    topic.partitions.emplace(partition_id{static_cast<std::int32_t>(p)}, partition);
  }
}

// The view after the moves complete.
coord::cluster_view after(coord::cluster_view view, const std::vector<replica_move>& moves) {
  for (const auto& m : moves) view.topics.at(m.topic).partitions.at(m.partition).replicas = m.target;
  return view;
}

std::size_t spread(const coord::cluster_view& view) {
  const auto loads = replica_loads(view);
  std::size_t lo = SIZE_MAX;
  std::size_t hi = 0;
  for (const auto& [b, n] : loads) {
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  return hi - lo;
}

TEST(PlanBalance, ANewBrokerReceivesReplicasABoundedNumberAtATime) {
  auto view = brokers(3, false);
  add_topic(view, "t", {{0, 1}, {1, 2}, {2, 0}, {0, 1}, {1, 2}, {2, 0}});
  view.brokers.emplace(broker_id{3}, coord::broker_info{broker_id{3}});
  const auto first = plan_balance(view, {"t"}, {.max_moves = 2}).moves;
  ASSERT_EQ(first.size(), 2U) << "at most max_moves at once";
  auto moved = after(view, first);
  const auto rest = plan_balance(moved, {"t"}, {.max_moves = 10}).moves;
  moved = after(moved, rest);
  EXPECT_LE(spread(moved), 1U);
  EXPECT_EQ(replica_loads(moved).at(broker_id{3}), 3U) << "12 replicas over 4 brokers";
  EXPECT_TRUE(plan_balance(moved, {"t"}, {.max_moves = 10}).moves.empty()) << "balanced: nothing more to do";
}

TEST(PlanBalance, MovesNoUnmanagedTopicAndNothingBeingReassigned) {
  auto view = brokers(3, false);
  add_topic(view, "mine", {{0, 1}, {0, 1}});
  add_topic(view, "theirs", {{0, 1}, {0, 1}});
  view.brokers.emplace(broker_id{3}, coord::broker_info{broker_id{3}});
  for (const auto& m : plan_balance(view, {"mine"}, {.max_moves = 10}).moves) EXPECT_EQ(m.topic, "mine");
  view.topics.at("mine").partitions.at(partition_id{0}).adding = {broker_id{2}};
  for (const auto& m : plan_balance(view, {"mine"}, {.max_moves = 10}).moves) {
    EXPECT_NE(m.partition, partition_id{0}) << "a partition being reassigned is left alone";
  }
  EXPECT_TRUE(plan_balance(view, {"mine"}, {.max_moves = 1}).moves.empty())
      << "the running reassignment uses the budget";
}

TEST(PlanBalance, KeepsRackSpreadAndNeverDuplicatesAReplica) {
  auto view = brokers(6);  // racks: 0,3 zone-0; 1,4 zone-1; 2,5 zone-2
  add_topic(view, "t", {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 1, 2}});
  // A partition moves at most once per plan; each round stands for the moves completing.
  int rounds = 0;
  for (auto moves = plan_balance(view, {"t"}, {.max_moves = 10}).moves; !moves.empty();
       moves = plan_balance(view, {"t"}, {.max_moves = 10}).moves) {
    ASSERT_LT(++rounds, 10) << "converges";
    for (const auto& m : moves) {
      std::set<std::string> racks;
      std::set<broker_id> distinct(m.target.begin(), m.target.end());
      EXPECT_EQ(distinct.size(), 3U);
      for (const auto b : m.target) racks.insert(*view.brokers.at(b).rack);
      EXPECT_EQ(racks.size(), 3U) << "still three racks";
    }
    view = after(view, moves);
  }
  EXPECT_GE(rounds, 1);
  EXPECT_LE(spread(view), 1U);
}

TEST(PlanBalance, DrainsALeavingBrokerKeepingReplicaOrder) {
  auto view = brokers(4, false);
  add_topic(view, "t", {{3, 0}, {1, 3}, {2, 0}});
  const auto plan = plan_balance(view, {}, {.max_moves = 10, .leaving = {broker_id{3}}});
  EXPECT_TRUE(plan.undrainable.empty());
  EXPECT_EQ(replica_floor(view, {}), 4);
  const auto drained = after(view, plan.moves);
  for (const auto& [p, partition] : drained.topics.at("t").partitions) {
    EXPECT_EQ(std::count(partition.replicas.begin(), partition.replicas.end(), broker_id{3}), 0) << "partition " << p;
  }
  EXPECT_EQ(drained.topics.at("t").partitions.at(partition_id{0}).replicas[1], broker_id{0}) << "order kept";
  EXPECT_EQ(drained.topics.at("t").partitions.at(partition_id{1}).replicas[0], broker_id{1});
  EXPECT_EQ(replica_floor(drained, {}), 3) << "broker 3 (pod 3) holds nothing: three pods keep every replica";
}

TEST(PlanBalance, ReportsWhatCannotBeDrained) {
  auto view = brokers(3, false);
  add_topic(view, "t", {{0, 1, 2}, {1, 2, 0}});
  const auto plan = plan_balance(view, {"t"}, {.max_moves = 10, .leaving = {broker_id{2}}});
  EXPECT_TRUE(plan.moves.empty()) << "replication factor 3 needs three brokers";
  EXPECT_EQ(plan.undrainable, (std::vector<std::string>{"t-0", "t-1"}));
}

TEST(ReplicaFloor, CountsMovesBeingStarted) {
  auto view = brokers(5, false);
  add_topic(view, "t", {{0, 1}});
  EXPECT_EQ(replica_floor(view, {}), 2);
  EXPECT_EQ(replica_floor(view, {replica_move{"t", partition_id{0}, {broker_id{4}, broker_id{1}}}}), 5);
  EXPECT_EQ(replica_floor(brokers(2), {}), 0);
}

TEST(BrokerSet, ReadsTheCountAskedForAndTheFloor) {
  auto sts = nlohmann::json::parse(R"({"metadata":{"annotations":{"ferry.dev/brokers":"3",
      "ferry.dev/replica-floor":"5"}},"spec":{"replicas":5}})");
  auto read = read_broker_set(sts);
  ASSERT_TRUE(read.set) << read.error;
  EXPECT_EQ(read.set->replicas, 5);
  EXPECT_EQ(read.set->desired, 3);
  EXPECT_EQ(read.set->floor, 5);

  read = read_broker_set(nlohmann::json::parse(R"({"metadata":{},"spec":{"replicas":4}})"));
  ASSERT_TRUE(read.set);
  EXPECT_EQ(read.set->desired, 4) << "no annotation: spec.replicas";
  EXPECT_FALSE(read.set->floor);

  for (const auto* bad : {"three", "0", "-1", "3x", ""}) {
    sts["metadata"]["annotations"]["ferry.dev/brokers"] = bad;
    read = read_broker_set(sts);
    EXPECT_FALSE(read.set) << bad;
    EXPECT_NE(read.error.find("ferry.dev/brokers"), std::string::npos) << read.error;
  }
}

}  // namespace
}  // namespace ferry::balance
