#include "coord/replica_sync.h"

#include <gtest/gtest.h>

namespace ferry::coord {
namespace {

std::vector<broker_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<broker_id> out;
  for (const auto v : values) out.emplace_back(v);
  return out;
}

// Brokers 0, 1 and 2 live; broker 2 registered at zxid 100 (it restarted then).
cluster_view three_brokers() {
  cluster_view view;
  for (const auto& [id, epoch] : {std::pair{0, 10}, std::pair{1, 11}, std::pair{2, 100}})
    view.brokers[broker_id{id}] = broker_info{.id = broker_id{id}, .epoch = epoch};
  return view;
}

void add(cluster_view& view, const std::string& topic, std::int32_t partition, std::vector<broker_id> replicas,
         std::int32_t leader, std::vector<broker_id> isr, std::int64_t written_zxid) {
  auto& p = view.topics[topic].partitions[partition_id{partition}];
  p.replicas = std::move(replicas);
  p.state = partition_state{.leader = broker_id{leader}, .isr = std::move(isr), .written_zxid = written_zxid};
}

TEST(replica_sync, follower_outside_the_isr_is_catching_up) {
  auto view = three_brokers();
  add(view, "orders", 0, ids({0, 1, 2}), 0, ids({0, 1}), 150);
  add(view, "orders", 1, ids({1, 2, 0}), 1, ids({1, 2, 0}), 160);
  EXPECT_EQ(replicas_catching_up(view, broker_id{2}), (std::vector<topic_partition>{{"orders", partition_id{0}}}));
  EXPECT_TRUE(replicas_catching_up(view, broker_id{0}).empty());
}

// The ISR still names broker 2 from before its restart: that says nothing about the new process's log.
TEST(replica_sync, isr_written_before_the_registration_does_not_count) {
  auto view = three_brokers();
  add(view, "orders", 0, ids({0, 1, 2}), 0, ids({0, 1, 2}), 50);
  add(view, "orders", 1, ids({2, 0, 1}), 2, ids({2, 0, 1}), 60);
  EXPECT_EQ(replicas_catching_up(view, broker_id{2}).size(), 2U);
  view.topics["orders"].partitions[partition_id{0}].state->written_zxid = 120;
  view.topics["orders"].partitions[partition_id{1}].state->written_zxid = 130;
  EXPECT_TRUE(replicas_catching_up(view, broker_id{2}).empty());
}

TEST(replica_sync, offline_partitions_and_replicas_being_added_do_not_count) {
  auto view = three_brokers();
  add(view, "no-leader", 0, ids({2, 1}), -1, ids({}), 150);
  add(view, "dead-leader", 0, ids({5, 2}), 5, ids({5}), 150);
  add(view, "moving", 0, ids({2, 0, 1}), 0, ids({0, 1}), 150);
  view.topics["moving"].partitions[partition_id{0}].adding = ids({2});
  add(view, "elsewhere", 0, ids({0, 1}), 0, ids({0}), 150);
  view.topics["no-state"].partitions[partition_id{0}].replicas = ids({2});
  EXPECT_TRUE(replicas_catching_up(view, broker_id{2}).empty());
}

}  // namespace
}  // namespace ferry::coord
