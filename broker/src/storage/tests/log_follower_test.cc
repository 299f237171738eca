// A follower's log: batches replicated from a leader's log byte for byte, and truncation to where the two
// logs agree.
#include <gtest/gtest.h>

#include "model/testing/batch_builder.h"
#include "storage/errc.h"
#include "storage/file_names.h"
#include "storage/log.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::build_simple_batch;
const std::uint64_t batch_size = build_simple_batch(3).size();

class log_follower_test : public ::testing::Test {
 protected:
  std::shared_ptr<log> open(const std::filesystem::path& dir, bool recovery = false,
                            offset recovery_point = offset{0}) {
    log_config config;
    config.segment_bytes = static_cast<std::int64_t>(4 * batch_size);
    auto opened = open_log({.fs = fs_,
                            .clock = &clock_,
                            .directory = dir,
                            .config = config,
                            .needs_recovery = recovery,
                            .recovery_point = recovery ? recovery_point : offset{INT64_MAX}});
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  static void append(log& l, std::int32_t epoch, int batches) {
    for (int i = 0; i < batches; ++i) {
      auto bytes = build_simple_batch(3);
      ASSERT_TRUE(l.append(bytes, leader_epoch{epoch}));
    }
  }
  static std::vector<std::byte> bytes_from(log& l, std::int64_t from) {
    const auto read = l.read(offset{from}, UINT64_MAX, offset{INT64_MAX});
    EXPECT_TRUE(read) << read.error().message();
    return read ? testing::read_all(read.value()) : std::vector<std::byte>{};
  }
  static std::vector<std::int64_t> bases(log& l) {
    const auto read = l.read(l.log_start_offset(), UINT64_MAX, offset{INT64_MAX});
    return read ? testing::base_offsets(read.value()) : std::vector<std::int64_t>{};
  }

  testing::temp_dir dir_;
  std::filesystem::path leader_dir_ = dir_.path() / "leader";
  std::filesystem::path follower_dir_ = dir_.path() / "follower";
  manual_clock clock_{1'700'000'000'000};
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

TEST_F(log_follower_test, replicated_batches_are_stored_as_the_leader_has_them) {
  auto leader = open(leader_dir_);
  append(*leader, 0, 3);
  append(*leader, 2, 4);  // seven batches over two segments
  auto follower = open(follower_dir_);
  const auto fetched = bytes_from(*leader, 0);
  const auto appended = follower->append_replicated(fetched);
  ASSERT_TRUE(appended) << appended.error().message();
  EXPECT_EQ(appended.value().base_offset, offset{0});
  EXPECT_EQ(appended.value().last_offset, offset{20});
  EXPECT_EQ(follower->log_end_offset(), offset{21});
  EXPECT_EQ(follower->segment_count(), 2u);
  EXPECT_EQ(bytes_from(*follower, 0), fetched);
  // The leader's epochs came with its batches.
  EXPECT_EQ(follower->end_offset_for_epoch(leader_epoch{0}), (epoch_end{leader_epoch{0}, offset{9}}));
  EXPECT_EQ(follower->latest_epoch(), leader_epoch{2});
  // A fetch that ends inside a batch: the whole batches go in, the partial one comes again next time.
  append(*leader, 2, 2);
  auto more = bytes_from(*leader, 21);
  more.resize(more.size() - 5);
  EXPECT_EQ(follower->append_replicated(more).value().last_offset, offset{23});
  EXPECT_EQ(follower->log_end_offset(), offset{24});
}

TEST_F(log_follower_test, a_batch_before_the_log_end_or_not_intact_is_refused_and_one_past_it_leaves_a_gap) {
  auto leader = open(leader_dir_);
  append(*leader, 0, 3);
  auto follower = open(follower_dir_);
  auto damaged = bytes_from(*leader, 0);
  damaged[batch_size - 1] ^= std::byte{1};
  EXPECT_FALSE(follower->append_replicated(damaged));
  EXPECT_EQ(follower->log_end_offset(), offset{0});
  // The leader's log skips offsets 0..2 (compaction, or a hole its recovery reads around): so does this one.
  ASSERT_TRUE(follower->append_replicated(bytes_from(*leader, 3)));
  EXPECT_EQ(follower->log_end_offset(), offset{9});
  EXPECT_EQ(bases(*follower), (std::vector<std::int64_t>{3, 6}));
  EXPECT_EQ(follower->append_replicated(bytes_from(*leader, 6)).error(), errc::out_of_order_offsets);
  EXPECT_EQ(follower->log_end_offset(), offset{9});
}

// A replica whose recovery found damage in flushed data reads around the hole; as a follower it truncates there
// (damaged_from) and fetches the rest again, ending with the leader's log.
TEST_F(log_follower_test, a_hole_recovery_left_is_reported_until_a_truncation_removes_it) {
  auto leader = open(leader_dir_);
  append(*leader, 0, 12);  // segments 0, 12 and 24 of four batches each
  {
    auto follower = open(follower_dir_);
    ASSERT_TRUE(follower->append_replicated(bytes_from(*leader, 0)));
    EXPECT_FALSE(follower->damaged_from());
  }
  testing::flip_byte(follower_dir_ / offset_file_name(offset{12}, log_suffix), batch_size + 70);  // in batch 15
  // Without its index the segment is scanned at the next start; the recovery point says all of it was flushed,
  // so the damage is kept and read around.
  std::filesystem::remove(follower_dir_ / offset_file_name(offset{12}, index_suffix));
  auto follower = open(follower_dir_, true, offset{36});
  ASSERT_EQ(follower->damaged_from(), offset{15});
  EXPECT_EQ(follower->log_end_offset(), offset{36});
  ASSERT_TRUE(follower->truncate_to(offset{15}));
  EXPECT_FALSE(follower->damaged_from());
  ASSERT_TRUE(follower->append_replicated(bytes_from(*leader, 15)));
  EXPECT_EQ(bytes_from(*follower, 0), bytes_from(*leader, 0));
}

TEST_F(log_follower_test, truncation_cuts_at_a_batch_boundary_and_the_log_goes_on_from_there) {
  auto leader = open(leader_dir_);
  append(*leader, 0, 5);
  append(*leader, 3, 5);  // epoch 3 from offset 15; segments from 0, 12 and 24
  auto follower = open(follower_dir_);
  ASSERT_TRUE(follower->append_replicated(bytes_from(*leader, 0)));
  ASSERT_EQ(follower->segment_count(), 3u);
  // 13 falls inside the batch 12-14: it goes whole, and the segment from 24 with it.
  ASSERT_TRUE(follower->truncate_to(offset{13}));
  EXPECT_EQ(follower->log_end_offset(), offset{12});
  EXPECT_EQ(follower->segment_count(), 2u);
  EXPECT_FALSE(std::filesystem::exists(follower_dir_ / offset_file_name(offset{24}, log_suffix)));
  EXPECT_EQ(bases(*follower), (std::vector<std::int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(follower->latest_epoch(), leader_epoch{0});
  EXPECT_EQ(follower->end_offset_for_epoch(leader_epoch{3}), epoch_end{});
  // Fetching on from the new end fills the log again, the same bytes as the leader's.
  ASSERT_TRUE(follower->append_replicated(bytes_from(*leader, 12)));
  EXPECT_EQ(bytes_from(*follower, 0), bytes_from(*leader, 0));
  EXPECT_EQ(follower->latest_epoch(), leader_epoch{3});
  // A truncation at a segment's base leaves that segment empty and active.
  ASSERT_TRUE(follower->truncate_to(offset{24}));
  EXPECT_EQ(follower->log_end_offset(), offset{24});
  EXPECT_EQ(follower->segment_count(), 3u);
  // What is left survives a clean restart and a crash.
  ASSERT_TRUE(follower->close());
  follower = open(follower_dir_);
  EXPECT_EQ(follower->log_end_offset(), offset{24});
  EXPECT_EQ(follower->end_offset_for_epoch(leader_epoch{3}), (epoch_end{leader_epoch{3}, offset{24}}));
  ASSERT_TRUE(follower->truncate_to(offset{6}));
  follower = open(follower_dir_, true);
  EXPECT_EQ(follower->log_end_offset(), offset{6});
  EXPECT_EQ(bases(*follower), (std::vector<std::int64_t>{0, 3}));
}

TEST_F(log_follower_test, truncation_below_the_log_start_empties_the_log_there) {
  auto follower = open(follower_dir_);
  append(*follower, 1, 6);
  ASSERT_TRUE(follower->truncate_to(offset{0}));
  EXPECT_EQ(follower->log_end_offset(), offset{0});
  EXPECT_EQ(follower->log_start_offset(), offset{0});
  EXPECT_EQ(follower->segment_count(), 1u);
  EXPECT_EQ(follower->latest_epoch(), leader_epoch{-1});
  EXPECT_TRUE(bases(*follower).empty());
}

TEST_F(log_follower_test, truncation_rebuilds_the_producer_state_from_what_is_left) {
  auto follower = open(follower_dir_);
  for (int i = 0; i < 6; ++i) {
    model::testing::batch_spec spec;
    spec.records.push_back({"k", "v", {}, 0});
    spec.producer = producer_id{7};
    spec.epoch = producer_epoch{0};
    spec.base_sequence = i;
    auto bytes = model::testing::build_batch(spec);
    ASSERT_TRUE(follower->append(bytes, leader_epoch{0}));
  }
  ASSERT_EQ(follower->producer(producer_id{7})->batches.back().last_offset, offset{5});
  ASSERT_TRUE(follower->truncate_to(offset{3}));
  EXPECT_EQ(follower->producer(producer_id{7})->batches.back().last_offset, offset{2});
}

// One record from producer 7, epoch 0, at `sequence`.
std::vector<std::byte> produced(std::int32_t sequence) {
  model::testing::batch_spec spec;
  spec.records.push_back({"k", "v", {}, 0});
  spec.producer = producer_id{7};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = sequence;
  return model::testing::build_batch(spec);
}

// A follower that becomes leader answers a retry of a batch it got by replication as the old leader would:
// one of the producer's last five batches is a duplicate with its original offsets (so the producer's
// retry after a leader change is not stored twice), an older one or a gap is out of order (as in Kafka).
// Also after a restart (snapshot plus replay) and after a truncation, from what is left.
TEST_F(log_follower_test, a_new_leader_answers_a_retry_of_a_replicated_batch_as_a_duplicate) {
  auto leader = open(leader_dir_);
  for (int seq = 0; seq < 9; ++seq) {
    auto bytes = produced(seq);
    ASSERT_TRUE(leader->append(bytes, leader_epoch{3}));
  }
  auto retry = [](log& l, std::int32_t seq) {
    auto bytes = produced(seq);
    return l.append(bytes, leader_epoch{4});
  };
  auto expect_retries_answered = [&](log& l) {
    for (std::int32_t seq = 4; seq < 9; ++seq) {
      const auto answered = retry(l, seq);
      ASSERT_TRUE(answered) << seq << ": " << answered.error().message();
      EXPECT_TRUE(answered.value().duplicate) << seq;
      EXPECT_EQ(answered.value().base_offset, offset{seq}) << seq;
    }
    EXPECT_EQ(retry(l, 3).error(), errc::out_of_order_sequence);   // older than the last five
    EXPECT_EQ(retry(l, 10).error(), errc::out_of_order_sequence);  // a gap
    EXPECT_EQ(l.log_end_offset(), offset{9});
  };
  {
    auto follower = open(follower_dir_);
    ASSERT_TRUE(follower->append_replicated(bytes_from(*leader, 0)));
    ASSERT_GT(follower->segment_count(), 1u);  // a producer snapshot is written at the roll
    expect_retries_answered(*follower);        // leading right away, on the state replication built
  }
  {
    // Reopened after a crash: rebuilt from the snapshots on disk and a replay of the batches after them.
    auto follower = open(follower_dir_, true);
    expect_retries_answered(*follower);
    ASSERT_TRUE(follower->close());
  }
  {
    // Reopened after a clean close: the snapshot at the log end.
    auto follower = open(follower_dir_);
    expect_retries_answered(*follower);
    // Truncated (a diverged tail): what was cut is no longer a duplicate but the next batch.
    ASSERT_TRUE(follower->truncate_to(offset{7}));
    const auto again = retry(*follower, 7);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_FALSE(again.value().duplicate);
    EXPECT_EQ(again.value().base_offset, offset{7});
    EXPECT_TRUE(retry(*follower, 6).value().duplicate);
  }
}

}  // namespace
}  // namespace ferry::storage
