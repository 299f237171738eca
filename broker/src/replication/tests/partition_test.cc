#include "replication/partition.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "model/testing/batch_builder.h"
#include "replication/errc.h"
#include "storage/errc.h"

namespace ferry::replication {
namespace {

class partition_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ferry-partition-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto log = storage::open_log({.fs = io::posix_file_system(), .clock = &clock_, .directory = dir_, .config = {}});
    ASSERT_TRUE(log);
    partition_ = std::make_unique<partition>(topic_partition{"t", partition_id{0}}, std::move(log.value()),
                                             config::topic_settings{}, metrics_.for_topic("t"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  manual_clock clock_;
  metrics::broker_metrics metrics_;
  std::filesystem::path dir_;
  std::unique_ptr<partition> partition_;
};

struct counting_waiter final : data_waiter {
  void notify() override { ++notified; }
  int notified = 0;
};

TEST_F(partition_test, only_the_leader_takes_appends_and_serves_reads) {
  auto batch = model::testing::build_simple_batch(3);
  EXPECT_EQ(partition_->append(batch).error(), errc::not_leader);
  EXPECT_EQ(partition_->read(offset{0}, 1024).error(), errc::not_leader);

  partition_->become_leader({leader_epoch{4}, {}, {}});
  const auto appended = partition_->append(batch);
  ASSERT_TRUE(appended);
  EXPECT_EQ(appended.value().base_offset, offset{0});
  // The leader epoch is stamped into the stored batch.
  EXPECT_EQ(model::batch_header_view(batch).partition_leader_epoch(), leader_epoch{4});
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  EXPECT_EQ(partition_->read(offset{0}, 1024).value().total_bytes, batch.size());

  partition_->become_follower(leader_epoch{5});
  EXPECT_FALSE(partition_->is_leader());
  EXPECT_EQ(partition_->epoch(), leader_epoch{5});
}

// A fetch stays registered until it unregisters (when it completes), and is woken by every append meanwhile;
// nothing is left behind on an idle partition.
TEST_F(partition_test, waiters_are_woken_until_they_leave) {
  partition_->become_leader({leader_epoch{0}, {}, {}});
  auto waiter = std::make_shared<counting_waiter>();
  partition_->add_waiter(waiter);
  partition_->add_waiter(waiter);  // once is enough
  EXPECT_EQ(partition_->waiter_count(), 1u);
  auto first = model::testing::build_simple_batch(1);
  ASSERT_TRUE(partition_->append(first));
  EXPECT_EQ(waiter->notified, 1);
  auto second = model::testing::build_simple_batch(1);
  ASSERT_TRUE(partition_->append(second));
  EXPECT_EQ(waiter->notified, 2);
  partition_->remove_waiter(waiter);
  EXPECT_EQ(partition_->waiter_count(), 0u);
  auto third = model::testing::build_simple_batch(1);
  ASSERT_TRUE(partition_->append(third));
  EXPECT_EQ(waiter->notified, 2);
}

// With flush.messages, a batch that owes a flush is neither visible nor announced until the flush is done.
TEST_F(partition_test, the_high_watermark_waits_for_a_flush_the_policy_asks_for) {
  config::topic_settings settings;
  settings.flush_messages = 1;
  partition_->update_settings(settings);
  partition_->become_leader({leader_epoch{0}, {}, {}});
  auto waiter = std::make_shared<counting_waiter>();
  partition_->add_waiter(waiter);
  auto batch = model::testing::build_simple_batch(3);
  const auto appended = partition_->append(batch);
  ASSERT_TRUE(appended);
  EXPECT_TRUE(appended.value().flush_required);
  EXPECT_EQ(partition_->high_watermark(), offset{0});
  EXPECT_EQ(waiter->notified, 0);
  ASSERT_TRUE(partition_->flush(offset{3}));
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  EXPECT_EQ(waiter->notified, 1);
  partition_->remove_waiter(waiter);
}

// The high watermark is the smallest log end over the ISR, and a follower counts once it has fetched.
TEST_F(partition_test, the_high_watermark_is_the_smallest_log_end_in_the_isr) {
  const broker_id two{2};
  const broker_id three{3};
  partition_->become_leader({leader_epoch{0}, {two, three}, {two, three}});
  for (int i = 0; i < 3; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    ASSERT_TRUE(partition_->append(batch));
  }
  EXPECT_EQ(partition_->high_watermark(), offset{0});
  EXPECT_EQ(partition_->in_sync_replicas(), 3u);
  auto waiter = std::make_shared<counting_waiter>();
  partition_->add_waiter(waiter);
  // Followers read past the high watermark, up to the log end; consumers do not.
  EXPECT_EQ(partition_->read_for_follower(two, offset{0}, 1 << 20).value().next_offset, offset{9});
  EXPECT_EQ(partition_->read(offset{0}, 1 << 20).value().total_bytes, 0u);
  EXPECT_EQ(partition_->high_watermark(), offset{0});  // broker 3 has not fetched yet
  ASSERT_TRUE(partition_->read_for_follower(three, offset{6}, 1 << 20));
  EXPECT_EQ(partition_->high_watermark(), offset{0});  // broker 2 is at 0
  EXPECT_EQ(waiter->notified, 0);
  ASSERT_TRUE(partition_->read_for_follower(two, offset{9}, 1 << 20));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  EXPECT_EQ(waiter->notified, 1);
  // It never moves back, even when a follower's log end does.
  ASSERT_TRUE(partition_->read_for_follower(three, offset{3}, 1 << 20));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  // A broker that is not a replica is refused and counts for nothing.
  EXPECT_EQ(partition_->read_for_follower(broker_id{4}, offset{9}, 1 << 20).error(), errc::not_leader);
  // A fetch offset past the log end is no log end a follower can have.
  EXPECT_EQ(partition_->read_for_follower(three, offset{50}, 1 << 20).error(), storage::errc::offset_out_of_range);
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  partition_->remove_waiter(waiter);
}

TEST_F(partition_test, a_follower_out_of_the_isr_no_longer_holds_the_high_watermark) {
  const broker_id two{2};
  const broker_id three{3};
  partition_->become_leader({leader_epoch{0}, {two, three}, {two, three}});
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20));
  EXPECT_EQ(partition_->high_watermark(), offset{0});
  partition_->become_leader({leader_epoch{0}, {two, three}, {two}});
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  EXPECT_EQ(partition_->in_sync_replicas(), 2u);
  // Alone in the ISR, the leader's log moves it.
  partition_->become_leader({leader_epoch{0}, {two, three}, {}});
  auto more = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(more));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
}

TEST_F(partition_test, a_new_epoch_forgets_where_the_followers_were) {
  const broker_id two{2};
  partition_->become_leader({leader_epoch{0}, {two}, {two}});
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20));
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  partition_->become_leader({leader_epoch{1}, {two}, {two}});
  auto more = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(more));
  EXPECT_EQ(partition_->high_watermark(), offset{3});  // broker 2 has not fetched in epoch 1
  ASSERT_TRUE(partition_->read_for_follower(two, offset{6}, 1 << 20));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  // A follower of epoch 1 stamps nothing itself; the epoch began where the log ended.
  EXPECT_EQ(partition_->log().end_offset_for_epoch(leader_epoch{0}), (storage::epoch_end{leader_epoch{0}, offset{3}}));
}

TEST_F(partition_test, settings_changes_reach_the_log) {
  config::topic_settings settings;
  settings.segment_bytes = 200;
  partition_->update_settings(settings);
  EXPECT_EQ(partition_->settings()->segment_bytes, 200);
  partition_->become_leader({leader_epoch{0}, {}, {}});
  for (int i = 0; i < 5; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    ASSERT_TRUE(partition_->append(batch));
  }
  EXPECT_GT(partition_->log().segment_count(), 1u);  // rolled at the new segment size
}

}  // namespace
}  // namespace ferry::replication
