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
