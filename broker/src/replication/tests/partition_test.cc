#include "replication/partition.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

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

// A leadership of broker 1 over `followers`, the view's ISR being broker 1 and `isr_followers`; every follower is
// live (registered with broker epoch 1).
partition::leadership leading(leader_epoch epoch, std::vector<broker_id> followers,
                              std::vector<broker_id> isr_followers, std::int32_t version = 0) {
  partition::leadership state{epoch, followers, isr_followers, {}};
  state.state = coord::partition_state{broker_id{1}, epoch, {broker_id{1}}, 1, version};
  for (const auto f : isr_followers) state.state.isr.push_back(f);
  for (const auto f : followers) state.live_followers.emplace(f, 1);
  return state;
}

struct counting_waiter final : data_waiter {
  void notify() override { ++notified; }
  int notified = 0;
};

TEST_F(partition_test, only_the_leader_takes_appends_and_serves_reads) {
  auto batch = model::testing::build_simple_batch(3);
  EXPECT_EQ(partition_->append(batch).error(), errc::not_leader);
  EXPECT_EQ(partition_->read(offset{0}, 1024, partition::isolation::read_uncommitted).error(), errc::not_leader);

  partition_->become_leader(leading(leader_epoch{4}, {}, {}));
  const auto appended = partition_->append(batch);
  ASSERT_TRUE(appended);
  EXPECT_EQ(appended.value().base_offset, offset{0});
  // The leader epoch is stamped into the stored batch.
  EXPECT_EQ(model::batch_header_view(batch).partition_leader_epoch(), leader_epoch{4});
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  EXPECT_EQ(partition_->read(offset{0}, 1024, partition::isolation::read_uncommitted).value().total_bytes,
            batch.size());

  partition_->become_follower(leader_epoch{5});
  EXPECT_FALSE(partition_->is_leader());
  EXPECT_EQ(partition_->epoch(), leader_epoch{5});
}

// A fetch stays registered until it unregisters (when it completes), and is woken by every append meanwhile;
// nothing is left behind on an idle partition.
TEST_F(partition_test, waiters_are_woken_until_they_leave) {
  partition_->become_leader(leading(leader_epoch{0}, {}, {}));
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
  partition_->become_leader(leading(leader_epoch{0}, {}, {}));
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
  partition_->become_leader(leading(leader_epoch{0}, {two, three}, {two, three}));
  for (int i = 0; i < 3; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    ASSERT_TRUE(partition_->append(batch));
  }
  EXPECT_EQ(partition_->high_watermark(), offset{0});
  EXPECT_EQ(partition_->in_sync_replicas(), 3u);
  auto waiter = std::make_shared<counting_waiter>();
  partition_->add_waiter(waiter);
  // Followers read past the high watermark, up to the log end; consumers do not.
  EXPECT_EQ(partition_->read_for_follower(two, offset{0}, 1 << 20, 0).value().next_offset, offset{9});
  EXPECT_EQ(partition_->read(offset{0}, 1 << 20, partition::isolation::read_uncommitted).value().total_bytes, 0u);
  EXPECT_EQ(partition_->high_watermark(), offset{0});  // broker 3 has not fetched yet
  ASSERT_TRUE(partition_->read_for_follower(three, offset{6}, 1 << 20, 0));
  EXPECT_EQ(partition_->high_watermark(), offset{0});  // broker 2 is at 0
  EXPECT_EQ(waiter->notified, 0);
  ASSERT_TRUE(partition_->read_for_follower(two, offset{9}, 1 << 20, 0));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  EXPECT_EQ(waiter->notified, 1);
  // It never moves back, even when a follower's log end does.
  ASSERT_TRUE(partition_->read_for_follower(three, offset{3}, 1 << 20, 0));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  // A broker that is not a replica is refused and counts for nothing.
  EXPECT_EQ(partition_->read_for_follower(broker_id{4}, offset{9}, 1 << 20, 0).error(), errc::not_leader);
  // A fetch offset past the log end is no log end a follower can have.
  EXPECT_EQ(partition_->read_for_follower(three, offset{50}, 1 << 20, 0).error(), storage::errc::offset_out_of_range);
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  partition_->remove_waiter(waiter);
}

TEST_F(partition_test, a_follower_out_of_the_isr_no_longer_holds_the_high_watermark) {
  const broker_id two{2};
  const broker_id three{3};
  partition_->become_leader(leading(leader_epoch{0}, {two, three}, {two, three}));
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 0));
  EXPECT_EQ(partition_->high_watermark(), offset{0});
  partition_->become_leader(leading(leader_epoch{0}, {two, three}, {two}));
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  EXPECT_EQ(partition_->in_sync_replicas(), 2u);
  // Alone in the ISR, the leader's log moves it.
  partition_->become_leader(leading(leader_epoch{0}, {two, three}, {}));
  auto more = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(more));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
}

TEST_F(partition_test, a_new_epoch_forgets_where_the_followers_were) {
  const broker_id two{2};
  partition_->become_leader(leading(leader_epoch{0}, {two}, {two}));
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 0));
  EXPECT_EQ(partition_->high_watermark(), offset{3});
  partition_->become_leader(leading(leader_epoch{1}, {two}, {two}));
  auto more = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(more));
  EXPECT_EQ(partition_->high_watermark(), offset{3});  // broker 2 has not fetched in epoch 1
  ASSERT_TRUE(partition_->read_for_follower(two, offset{6}, 1 << 20, 0));
  EXPECT_EQ(partition_->high_watermark(), offset{6});
  // A follower of epoch 1 stamps nothing itself; the epoch began where the log ended.
  EXPECT_EQ(partition_->log().end_offset_for_epoch(leader_epoch{0}), (storage::epoch_end{leader_epoch{0}, offset{3}}));
}

// A follower in a controlled shutdown keeps fetching, but the leader does not take it into the ISR, however
// caught up it is: the controller has just taken it out.
TEST_F(partition_test, a_follower_shutting_down_does_not_join_the_isr) {
  const broker_id one{1};
  const broker_id two{2};
  auto state = leading(leader_epoch{0}, {two}, {});
  state.leaving = {two};
  partition_->become_leader(state);
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 1000));
  EXPECT_FALSE(partition_->wanted_isr_change(1000, 30000));
  // Back from its restart, it joins as any follower does.
  state.leaving.clear();
  partition_->become_leader(state);
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 2000));
  const auto joined = partition_->wanted_isr_change(2000, 30000);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->isr, (std::vector<broker_id>{one, two}));
}

// ISR changes, as Kafka's leader decides them: a follower joins once at the high watermark and the start of
// the epoch, and leaves after replica.lag.time.max.ms without being caught up.
TEST_F(partition_test, followers_join_the_isr_when_caught_up_and_leave_when_they_lag) {
  const broker_id one{1};
  const broker_id two{2};
  const broker_id three{3};
  const auto lead = [&](std::vector<broker_id> isr, std::int32_t version) {
    std::vector<broker_id> isr_followers;
    for (const auto b : isr)
      if (b != one) isr_followers.push_back(b);
    partition_->become_leader(leading(leader_epoch{0}, {two, three}, isr_followers, version));
  };
  lead({one}, 0);
  for (int i = 0; i < 2; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    ASSERT_TRUE(partition_->append(batch));
  }
  EXPECT_EQ(partition_->high_watermark(), offset{6});  // alone in the ISR
  EXPECT_FALSE(partition_->wanted_isr_change(1000, 30000));
  // Broker 2 fetches from 3: behind the high watermark, it stays out.
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 1000));
  EXPECT_FALSE(partition_->wanted_isr_change(1000, 30000));
  // At 6 it has everything committed: it joins, and counts for the high watermark at once.
  ASSERT_TRUE(partition_->read_for_follower(two, offset{6}, 1 << 20, 1100));
  const auto joined = partition_->wanted_isr_change(1100, 30000);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->isr, (std::vector<broker_id>{one, two}));
  EXPECT_EQ(joined->expected.zk_version, 0);
  EXPECT_EQ(partition_->in_sync_replicas(), 1u) << "min.insync.replicas counts it once ZooKeeper has it";
  EXPECT_FALSE(partition_->wanted_isr_change(1100, 30000));  // on its way
  // A view from before the write (the same state version) does not drop the joiner.
  lead({one}, 0);
  EXPECT_EQ(partition_->in_sync_replicas(), 1u);
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  EXPECT_EQ(partition_->high_watermark(), offset{6});  // broker 2 is at 6
  // The view says so; broker 2 keeps up for a while, then stops fetching.
  lead({one, two}, 1);
  ASSERT_TRUE(partition_->read_for_follower(two, offset{9}, 1 << 20, 2000));
  EXPECT_EQ(partition_->high_watermark(), offset{9});
  EXPECT_FALSE(partition_->wanted_isr_change(31000, 30000));  // caught up at 2000: 29 s ago
  auto more = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(more));
  const auto left = partition_->wanted_isr_change(32001, 30000);
  ASSERT_TRUE(left);
  EXPECT_EQ(left->isr, (std::vector<broker_id>{one}));
  EXPECT_EQ(left->expected.zk_version, 1);
  // Until the view drops it, it still holds the high watermark; a failed write lets the leader try again.
  EXPECT_EQ(partition_->high_watermark(), offset{9});
  partition_->isr_change_failed();
  EXPECT_TRUE(partition_->wanted_isr_change(32001, 30000));
}

// Review finding 2: a follower the controller dropped from the ISR (dead, or restarting) does not rejoin on what it
// fetched before; only its own fetch since then, while its broker is registered, lets it in (Kafka's
// maybeExpandIsr runs on a fetch, KAFKA-14140 and KIP-903).
TEST_F(partition_test, a_dropped_follower_rejoins_only_on_a_fetch_of_its_own_while_live) {
  const broker_id two{2};
  partition_->become_leader(leading(leader_epoch{0}, {two}, {two}, 0));
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 1000));
  ASSERT_EQ(partition_->high_watermark(), offset{3});
  // Broker 2 dies: the controller drops it, and it is not live.
  auto dead = leading(leader_epoch{0}, {two}, {}, 1);
  dead.live_followers.clear();
  partition_->become_leader(dead);
  EXPECT_FALSE(partition_->wanted_isr_change(1100, 30000)) << "no join from progress made before it was dropped";
  // It comes back (a new broker epoch) but has not fetched yet: still out.
  auto back = leading(leader_epoch{0}, {two}, {}, 1);
  back.live_followers[two] = 7;
  partition_->become_leader(back);
  EXPECT_FALSE(partition_->wanted_isr_change(1200, 30000));
  // Its fetch at the high watermark lets it in.
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 1300));
  const auto joined = partition_->wanted_isr_change(1300, 30000);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->isr, (std::vector<broker_id>{broker_id{1}, two}));
}

// A follower out of the ISR that fetched, then registered again (restarted: its log may be shorter now), joins
// only on a fetch made since.
TEST_F(partition_test, a_restarted_follower_is_not_admitted_on_what_it_fetched_before) {
  const broker_id two{2};
  auto state = leading(leader_epoch{0}, {two}, {}, 0);
  partition_->become_leader(state);
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 1000));
  state.live_followers[two] = 2;  // registered again
  partition_->become_leader(state);
  EXPECT_FALSE(partition_->wanted_isr_change(1100, 30000));
}

// Review finding 12 (B): a joiner whose ISR write is on its way holds the high watermark, but min.insync.replicas
// counts the ISR as ZooKeeper has it.
TEST_F(partition_test, a_joiner_counts_for_min_insync_only_once_its_isr_write_is_in_the_view) {
  const broker_id two{2};
  partition_->become_leader(leading(leader_epoch{0}, {two}, {}, 0));
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(partition_->append(batch));
  ASSERT_TRUE(partition_->read_for_follower(two, offset{3}, 1 << 20, 1000));
  ASSERT_TRUE(partition_->wanted_isr_change(1000, 30000));
  EXPECT_EQ(partition_->in_sync_replicas(), 1u);
  partition_->become_leader(leading(leader_epoch{0}, {two}, {two}, 1));
  EXPECT_EQ(partition_->in_sync_replicas(), 2u);
}

// Review finding 12 (A): with producers appending while a follower is admitted, the high watermark never passes
// the joiner (it is admitted under the lock every move of the high watermark takes).
TEST_F(partition_test, the_high_watermark_never_passes_a_joiner_admitted_during_appends) {
  const broker_id two{2};
  std::atomic<bool> stop{false};
  std::int32_t version = 0;
  partition_->become_leader(leading(leader_epoch{0}, {two}, {}, version));
  std::thread producer([&] {
    while (!stop.load()) {
      auto batch = model::testing::build_simple_batch(1);
      if (!partition_->append(batch)) break;
    }
  });
  int joins = 0;
  for (int i = 0; i < 300; ++i) {
    const offset at = partition_->log_end_offset();
    ASSERT_TRUE(partition_->read_for_follower(two, at, 1, 1000));
    if (const auto joined = partition_->wanted_isr_change(1000, 30000)) {
      ++joins;
      EXPECT_LE(partition_->high_watermark(), at) << "the joiner holds the high watermark where it was";
    }
    partition_->become_leader(leading(leader_epoch{0}, {two}, {}, ++version));  // the view drops it again
  }
  stop = true;
  producer.join();
  EXPECT_GT(joins, 0);
}

TEST_F(partition_test, an_isr_member_that_never_fetches_gets_the_full_lag_from_the_election) {
  const broker_id one{1};
  const broker_id two{2};
  partition_->become_leader(leading(leader_epoch{3}, {two}, {two}, 4));
  EXPECT_FALSE(partition_->wanted_isr_change(5000, 30000));  // first seen at 5000
  EXPECT_FALSE(partition_->wanted_isr_change(35000, 30000));
  const auto left = partition_->wanted_isr_change(35001, 30000);
  ASSERT_TRUE(left);
  EXPECT_EQ(left->isr, (std::vector<broker_id>{one}));
}

TEST_F(partition_test, settings_changes_reach_the_log) {
  config::topic_settings settings;
  settings.segment_bytes = 200;
  partition_->update_settings(settings);
  EXPECT_EQ(partition_->settings()->segment_bytes, 200);
  partition_->become_leader(leading(leader_epoch{0}, {}, {}));
  for (int i = 0; i < 5; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    ASSERT_TRUE(partition_->append(batch));
  }
  EXPECT_GT(partition_->log().segment_count(), 1u);  // rolled at the new segment size
}

}  // namespace
}  // namespace ferry::replication

namespace ferry::replication {
namespace {

// KIP-890 part 1: a verified batch that arrives after a marker of its producer (a late retry of a transaction
// that already ended) must not open a transaction nobody will end.
TEST_F(partition_test, a_marker_ends_the_verifications_begun_before_it) {
  partition_->become_leader(leading(leader_epoch{1}, {}, {}));
  const auto txn_batch = [](std::int32_t sequence) {
    return model::testing::build_batch({.records = {{.value = "a"}},
                                        .producer = producer_id{9},
                                        .epoch = producer_epoch{0},
                                        .base_sequence = sequence,
                                        .transactional = true});
  };
  auto first = txn_batch(0);
  const auto guard = partition_->begin_txn_verification(producer_id{9});
  ASSERT_TRUE(partition_->append_verified(first, producer_id{9}, guard));
  EXPECT_EQ(partition_->append_verified(first, producer_id{9}, guard).error(), storage::errc::invalid_txn_state)
      << "a guard is good for one append";

  const auto late = partition_->begin_txn_verification(producer_id{9});
  ASSERT_TRUE(partition_->append_marker(producer_id{9}, producer_epoch{0}, {model::marker_type::commit, 0}));
  auto retry = txn_batch(1);
  EXPECT_EQ(partition_->append_verified(retry, producer_id{9}, late).error(), storage::errc::invalid_txn_state);
  EXPECT_EQ(partition_->last_stable_offset(), partition_->high_watermark()) << "no transaction left open";
}

}  // namespace
}  // namespace ferry::replication
