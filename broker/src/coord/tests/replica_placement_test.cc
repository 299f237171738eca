#include "coord/replica_placement.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "coord/errc.h"

namespace ferry::coord {
namespace {

std::vector<broker_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<broker_id> out;
  for (const auto v : values) out.emplace_back(v);
  return out;
}

TEST(AssignReplicas, MatchesKafka) {
  // AdminZkClientTest.testReplicaAssignment: five brokers, ten partitions, three replicas, start index 0.
  const auto brokers = ids({0, 1, 2, 3, 4});
  auto assignment = assign_replicas(brokers, 10, 3, 0);
  ASSERT_TRUE(assignment);
  const layout::replica_assignment expected = {{partition_id{0}, ids({0, 1, 2})}, {partition_id{1}, ids({1, 2, 3})},
                                               {partition_id{2}, ids({2, 3, 4})}, {partition_id{3}, ids({3, 4, 0})},
                                               {partition_id{4}, ids({4, 0, 1})}, {partition_id{5}, ids({0, 2, 3})},
                                               {partition_id{6}, ids({1, 3, 4})}, {partition_id{7}, ids({2, 4, 0})},
                                               {partition_id{8}, ids({3, 0, 1})}, {partition_id{9}, ids({4, 1, 2})}};
  EXPECT_EQ(assignment.value(), expected);
}

TEST(AssignReplicas, SpreadsLeadersAndReplicasEvenly) {
  const auto brokers = ids({1, 2, 3, 4});
  for (std::int32_t start = 0; start < 4; ++start) {
    auto assignment = assign_replicas(brokers, 12, 3, start);
    ASSERT_TRUE(assignment);
    ASSERT_EQ(assignment.value().size(), 12u);
    std::map<broker_id, int> leaders;
    std::map<broker_id, int> replicas;
    for (const auto& [p, r] : assignment.value()) {
      ASSERT_EQ(r.size(), 3u);
      EXPECT_EQ(std::set<broker_id>(r.begin(), r.end()).size(), 3u) << "duplicate replica in partition " << p;
      ++leaders[r.front()];
      for (const auto b : r) ++replicas[b];
    }
    for (const auto b : brokers) {
      EXPECT_EQ(leaders[b], 3) << "broker " << b << " start " << start;
      EXPECT_EQ(replicas[b], 9) << "broker " << b << " start " << start;
    }
    // The start index picks the leader of partition 0.
    EXPECT_EQ(assignment.value().at(partition_id{0}).front(), brokers[static_cast<std::size_t>(start)]);
  }
}

TEST(AssignReplicas, ContinuesNumberingForAddedPartitions) {
  const auto brokers = ids({0, 1, 2});
  auto added = assign_replicas(brokers, 2, 2, 0, 3);
  ASSERT_TRUE(added);
  EXPECT_EQ(added.value(),
            (layout::replica_assignment{{partition_id{3}, ids({0, 2})}, {partition_id{4}, ids({1, 0})}}));
}

TEST(AssignReplicas, SingleBroker) {
  auto assignment = assign_replicas(ids({7}), 3, 1, 0);
  ASSERT_TRUE(assignment);
  for (const auto& [p, r] : assignment.value()) EXPECT_EQ(r, ids({7}));
}

TEST(AssignReplicas, RejectsImpossibleRequests) {
  const auto brokers = ids({1, 2});
  EXPECT_EQ(assign_replicas(brokers, 3, 3, 0).error(), errc::invalid_replication_factor);
  EXPECT_EQ(assign_replicas(brokers, 3, 0, 0).error(), errc::invalid_replication_factor);
  EXPECT_EQ(assign_replicas({}, 3, 1, 0).error(), errc::invalid_replication_factor);
  EXPECT_EQ(assign_replicas(brokers, 0, 1, 0).error(), errc::invalid_argument);
  EXPECT_EQ(assign_replicas(brokers, 1, 1, -1).error(), errc::invalid_argument);
}

}  // namespace
}  // namespace ferry::coord

namespace ferry::coord {
namespace {

std::vector<placement_broker> racked(std::initializer_list<std::pair<std::int32_t, const char*>> brokers) {
  std::vector<placement_broker> out;
  for (const auto& [id, rack] : brokers)
    out.push_back({broker_id{id}, rack == nullptr ? std::nullopt : std::optional<std::string>(rack)});
  return out;
}

TEST(PlaceReplicas, RackAwareMatchesKafka) {
  // AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers: the rack-alternated list is
  // 0, 3, 1, 5, 4, 2.
  const auto brokers = racked({{0, "rack1"}, {1, "rack3"}, {2, "rack3"}, {3, "rack2"}, {4, "rack2"}, {5, "rack1"}});
  auto assignment = place_replicas(brokers, 7, 3, 0);
  ASSERT_TRUE(assignment);
  const layout::replica_assignment expected = {{partition_id{0}, ids({0, 3, 1})}, {partition_id{1}, ids({3, 1, 5})},
                                               {partition_id{2}, ids({1, 5, 4})}, {partition_id{3}, ids({5, 4, 2})},
                                               {partition_id{4}, ids({4, 2, 0})}, {partition_id{5}, ids({2, 0, 3})},
                                               {partition_id{6}, ids({0, 4, 2})}};
  EXPECT_EQ(assignment.value(), expected);
}

TEST(PlaceReplicas, EveryPartitionSpansAsManyRacksAsItCanAndLeadersSpread) {
  // Two zones of three brokers and one of two: three replicas always land in three zones.
  const auto brokers = racked({{1, "a"}, {2, "a"}, {3, "a"}, {4, "b"}, {5, "b"}, {6, "b"}, {7, "c"}, {8, "c"}});
  for (std::int32_t start = 0; start < 8; ++start) {
    auto assignment = place_replicas(brokers, 16, 3, start);
    ASSERT_TRUE(assignment);
    std::map<broker_id, int> leaders;
    for (const auto& [p, replicas] : assignment.value()) {
      std::set<std::string> zones;
      for (const auto r : replicas) zones.insert(*brokers[static_cast<std::size_t>(r.value() - 1)].rack);
      EXPECT_EQ(zones.size(), 3u) << "partition " << p << " from start " << start;
      EXPECT_EQ(std::set<broker_id>(replicas.begin(), replicas.end()).size(), 3u);
      ++leaders[replicas.front()];
    }
    for (const auto& [broker, count] : leaders) EXPECT_EQ(count, 2) << "broker " << broker;
  }
  // More replicas than racks: every rack first, then the rest.
  auto wide = place_replicas(racked({{1, "a"}, {2, "a"}, {3, "b"}, {4, "b"}}), 4, 3, 1);
  ASSERT_TRUE(wide);
  for (const auto& [p, replicas] : wide.value()) {
    const bool in_a = replicas[0].value() <= 2 || replicas[1].value() <= 2;
    const bool in_b = replicas[0].value() >= 3 || replicas[1].value() >= 3;
    EXPECT_TRUE(in_a && in_b) << "partition " << p << ": the first two replicas share a rack";
  }
}

TEST(PlaceReplicas, WithoutRacksIsRackUnawareAndMixedIsRefused) {
  const auto plain = racked({{2, nullptr}, {0, nullptr}, {1, nullptr}});
  EXPECT_EQ(place_replicas(plain, 5, 2, 1).value(), assign_replicas(ids({0, 1, 2}), 5, 2, 1).value());
  EXPECT_EQ(place_replicas(racked({{0, "a"}, {1, nullptr}}), 1, 1, 0).error(), errc::invalid_argument);
  EXPECT_EQ(place_replicas(racked({{0, "a"}, {1, "b"}}), 1, 3, 0).error(), errc::invalid_replication_factor);
}

}  // namespace
}  // namespace ferry::coord
