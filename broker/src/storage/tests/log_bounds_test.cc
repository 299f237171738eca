// What the log knows of its partition, and checks under its own lock (review findings 6, 7 and 13): retention never
// moves the log start past the high watermark; a leader's append from an epoch that ended, and a replicated append
// once the replica leads, are refused rather than rewrite the epoch cache; a truncation writes the recovery-point
// checkpoint again at once. (Finding 3, the cleaner's bound, is in compaction_test.)
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/testing/batch_builder.h"
#include "storage/errc.h"
#include "storage/log.h"
#include "storage/log_manager.h"
#include "storage/offset_checkpoint.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::build_simple_batch;

constexpr std::int64_t start_ms = 1'700'000'000'000;
const std::uint64_t batch_size = build_simple_batch(3).size();

class log_bounds_test : public ::testing::Test {
 protected:
  std::shared_ptr<log> open(const log_config& config) {
    auto opened =
        open_log({.fs = io::posix_file_system(), .clock = &clock_, .directory = dir_.path(), .config = config});
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  static result<append_result> append(log& l, leader_epoch epoch) {
    auto bytes = build_simple_batch(3);
    return l.append(bytes, epoch);
  }

  testing::temp_dir dir_;
  manual_clock clock_{start_ms};
};

TEST_F(log_bounds_test, retention_never_moves_the_log_start_past_the_high_watermark) {
  log_config config;
  config.segment_bytes = static_cast<std::int64_t>(2 * batch_size);  // segments at 0, 6, 12, 18, 24
  config.retention_ms = 1000;
  auto l = open(config);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(append(*l, leader_epoch{0}));
  ASSERT_EQ(l->segment_count(), 5u);
  clock_.advance(std::chrono::hours(1));  // every segment has expired
  l->set_high_watermark(offset{3});       // inside the first segment
  EXPECT_EQ(l->apply_retention().value(), 0u);
  EXPECT_EQ(l->log_start_offset(), offset{0});
  l->set_high_watermark(offset{13});  // past the first two segments, inside the third
  EXPECT_EQ(l->apply_retention().value(), 2u);
  EXPECT_EQ(l->log_start_offset(), offset{12});
  l->set_high_watermark(offset{30});
  EXPECT_EQ(l->apply_retention().value(), 2u);  // never the active one
  EXPECT_EQ(l->log_start_offset(), offset{24});
}

TEST_F(log_bounds_test, an_append_from_an_epoch_that_ended_is_refused_and_the_epochs_stay) {
  auto l = open({});
  l->begin_epoch(leader_epoch{3});
  ASSERT_TRUE(append(*l, leader_epoch{3}));  // 0-2 in epoch 3
  // Elected again (epoch 5) while an append that read epoch 3 waited for the lock.
  l->begin_epoch(leader_epoch{5});
  EXPECT_EQ(append(*l, leader_epoch{3}).error(), errc::role_changed);
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{3}), (epoch_end{leader_epoch{3}, offset{3}}));
  EXPECT_EQ(l->latest_epoch(), leader_epoch{5});
  ASSERT_TRUE(append(*l, leader_epoch{5}));
  // While it leads, the old leader's batches (a fetch answered before the election) go nowhere.
  const auto replicated = build_simple_batch(3, offset{6});
  EXPECT_EQ(l->append_replicated(replicated).error(), errc::role_changed);
  // Once it follows, it is the other way round.
  l->follow();
  EXPECT_EQ(append(*l, leader_epoch{5}).error(), errc::role_changed);
  ASSERT_TRUE(l->append_replicated(replicated));
  EXPECT_EQ(l->log_end_offset(), offset{9});
}

TEST_F(log_bounds_test, a_truncation_writes_the_recovery_point_checkpoint_at_once) {
  auto manager = log_manager::open({.fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {dir_.path()}});
  ASSERT_TRUE(manager);
  const topic_partition tp{"t", partition_id{0}};
  auto l = manager.value()->create(tp, log_config{}).value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(append(*l, leader_epoch{0}));
  ASSERT_TRUE(l->flush(offset{9}));
  ASSERT_TRUE(manager.value()->checkpoint_recovery_points());
  const auto checkpointed = [&] {
    std::ifstream in(dir_.path() / recovery_point_checkpoint);
    std::stringstream text;
    text << in.rdbuf();
    const auto decoded = decode_offset_checkpoint(text.str());
    EXPECT_TRUE(decoded);
    return decoded ? decoded.value().at(tp) : no_offset;
  };
  ASSERT_EQ(checkpointed(), offset{9});
  ASSERT_TRUE(l->truncate_to(offset{3}));
  EXPECT_EQ(checkpointed(), offset{3});
}

}  // namespace
}  // namespace ferry::storage
