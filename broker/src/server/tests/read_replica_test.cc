// Fetching from the closest replica (KIP-392): the leader's choice of a replica for a consumer that names its
// rack, and a follower serving consumers: see handlers_fixture.h.
#include "model/testing/batch_builder.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

class read_replica_test : public handlers_test {
 protected:
  // "near": led here (broker 1, rack a), broker 2 (rack b) in sync at the log end of a 3-record batch.
  void SetUp() override {
    handlers_test::SetUp();
    config_.rack = "a";
    config_.replica_selector_rack_aware = true;
    replicated_topic("near");
    cluster_.edit([](coord::cluster_view& v) { v.brokers.at(broker_id{2}).rack = "b"; });
    batch_ = model::testing::build_simple_batch(3);
    auto request = produce("near", batch_);
    ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
    auto caught_up = follower_fetch("near", 3);
    ASSERT_EQ(run(handlers::handle_fetch, caught_up, 12).responses[0].partitions[0].high_watermark, offset{3});
  }

  std::vector<std::byte> batch_;
};

TEST_F(read_replica_test, a_consumer_in_a_followers_rack_is_sent_to_it) {
  auto request = consumer_fetch("near", 0, "b");
  const auto answer = run(handlers::handle_fetch, request, 11).responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.preferred_read_replica, broker_id{2});
  EXPECT_EQ(answer.records->size(), 0U);
  EXPECT_EQ(answer.high_watermark, offset{3});
}

TEST_F(read_replica_test, the_leader_serves_its_own_rack_other_racks_and_consumers_naming_none) {
  for (const auto* rack : {"a", "c", ""}) {
    auto request = consumer_fetch("near", 0, rack);
    const auto answer = run(handlers::handle_fetch, request, 11).responses[0].partitions[0];
    EXPECT_EQ(answer.preferred_read_replica, broker_id{-1}) << rack;
    EXPECT_EQ(answer.records->size(), batch_.size()) << rack;
  }
}

TEST_F(read_replica_test, a_follower_without_the_fetch_offset_or_out_of_the_isr_is_not_chosen) {
  auto beyond = consumer_fetch("near", 4, "b");  // the follower's log ends at 3
  EXPECT_EQ(run(handlers::handle_fetch, beyond, 11).responses[0].partitions[0].preferred_read_replica, broker_id{-1});
  cluster_.edit([](coord::cluster_view& v) {
    auto& state = *v.topics.at("near").partitions.at(partition_id{0}).state;
    state.isr = {broker_id{1}};
    ++state.zk_version;
  });
  partitions_->reconcile(*cluster_.view());
  auto request = consumer_fetch("near", 0, "b");
  EXPECT_EQ(run(handlers::handle_fetch, request, 11).responses[0].partitions[0].preferred_read_replica, broker_id{-1});
}

TEST_F(read_replica_test, without_replica_selector_class_every_consumer_reads_from_the_leader) {
  config_.replica_selector_rack_aware = false;
  auto request = consumer_fetch("near", 0, "b");
  const auto answer = run(handlers::handle_fetch, request, 11).responses[0].partitions[0];
  EXPECT_EQ(answer.preferred_read_replica, broker_id{-1});
  EXPECT_EQ(answer.records->size(), batch_.size());
}

// A follower serves consumers of Fetch v11+ up to the high watermark its leader told it; older consumers are
// sent to the leader.
TEST_F(handlers_test, a_follower_serves_consumers_up_to_its_high_watermark) {
  cluster_.edit([](coord::cluster_view& v) {
    v.brokers[broker_id{2}] = coord::broker_info{
        broker_id{2}, "127.0.0.2", 9093, std::nullopt, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.2", 9093}}, 2};
    v.topics["far"].partitions[partition_id{0}] = {
        {broker_id{2}, broker_id{1}},
        coord::partition_state{broker_id{2}, leader_epoch{3}, {broker_id{2}, broker_id{1}}, 1, 0, written}};
  });
  partitions_->reconcile(*cluster_.view());
  const auto replica = partitions_->replica_for({"far", partition_id{0}}).value();
  ASSERT_FALSE(replica->is_leader());
  const auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(replica->append_from_leader(batch, offset{0}));

  auto before_hw = consumer_fetch("far", 0);
  auto answer = run(handlers::handle_fetch, before_hw, 11).responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.records->size(), 0U);  // nothing committed yet, as far as this follower knows
  replica->follow_high_watermark(offset{3});
  auto after_hw = consumer_fetch("far", 0);
  answer = run(handlers::handle_fetch, after_hw, 11).responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.high_watermark, offset{3});
  EXPECT_EQ(answer.records->size(), batch.size());

  // A consumer that knows an older epoch is fenced and told who leads: the follower's leader, not the follower.
  auto stale = consumer_fetch("far", 0);
  stale.topics[0].partitions[0].current_leader_epoch = leader_epoch{1};
  const auto fenced = run(handlers::handle_fetch, stale, 12);
  EXPECT_EQ(fenced.responses[0].partitions[0].error_code, p::code(p::error_code::fenced_leader_epoch));
  EXPECT_EQ(fenced.responses[0].partitions[0].current_leader.leader_id, broker_id{2});
  EXPECT_EQ(fenced.responses[0].partitions[0].current_leader.leader_epoch, leader_epoch{3});

  auto old_consumer = consumer_fetch("far", 0);
  EXPECT_EQ(run(handlers::handle_fetch, old_consumer, 10).responses[0].partitions[0].error_code,
            p::code(p::error_code::not_leader_or_follower));
}

}  // namespace
}  // namespace ferry::server::testing
