#include "replication/replica_selector.h"

#include <gtest/gtest.h>

namespace ferry::replication {
namespace {

const std::vector<read_candidate> followers{
    {broker_id{2}, "b", offset{100}, 5},
    {broker_id{3}, "b", offset{120}, 4},
    {broker_id{4}, "c", offset{130}, 9},
    {broker_id{5}, std::nullopt, offset{140}, 9},
};

TEST(RackAwareReadReplica, TheLongestReplicaInTheConsumersRack) {
  EXPECT_EQ(rack_aware_read_replica("b", "a", followers), broker_id{3});
  EXPECT_EQ(rack_aware_read_replica("c", "a", followers), broker_id{4});
}

TEST(RackAwareReadReplica, TheLeaderWhenItIsInTheRackOrNoneIs) {
  EXPECT_EQ(rack_aware_read_replica("b", "b", followers), std::nullopt);
  EXPECT_EQ(rack_aware_read_replica("d", "a", followers), std::nullopt);
  EXPECT_EQ(rack_aware_read_replica("", "a", followers), std::nullopt);  // the consumer names no rack
}

TEST(RackAwareReadReplica, AtEqualLengthTheOneCaughtUpLast) {
  const std::vector<read_candidate> tied{{broker_id{2}, "b", offset{100}, 5}, {broker_id{3}, "b", offset{100}, 7}};
  EXPECT_EQ(rack_aware_read_replica("b", "a", tied), broker_id{3});
}

}  // namespace
}  // namespace ferry::replication
