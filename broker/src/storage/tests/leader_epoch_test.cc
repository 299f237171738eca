// The leader epoch cache (KIP-101, KIP-279) and the log's use of it: where each epoch starts, where it ends,
// the leader-epoch-checkpoint, and what a restart or a crash leaves of it.
#include <gtest/gtest.h>

#include "model/testing/batch_builder.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::build_simple_batch;

leader_epoch_cache cache_of(std::initializer_list<std::pair<std::int32_t, std::int64_t>> entries) {
  std::vector<epoch_entry> out;
  for (const auto& [epoch, start] : entries) out.push_back({leader_epoch{epoch}, offset{start}});
  return leader_epoch_cache(std::move(out));
}

std::vector<std::pair<std::int32_t, std::int64_t>> contents(const leader_epoch_cache& cache) {
  std::vector<std::pair<std::int32_t, std::int64_t>> out;
  for (const auto& e : cache.entries()) out.emplace_back(e.epoch.value(), e.start.value());
  return out;
}

epoch_end ends(std::int32_t epoch, std::int64_t end) { return {leader_epoch{epoch}, offset{end}}; }

TEST(leader_epoch_cache, an_epoch_is_recorded_once_where_it_starts) {
  leader_epoch_cache cache;
  EXPECT_TRUE(cache.assign(leader_epoch{0}, offset{0}));
  EXPECT_FALSE(cache.assign(leader_epoch{0}, offset{3}));  // later batches of the same epoch
  EXPECT_TRUE(cache.assign(leader_epoch{2}, offset{10}));
  EXPECT_FALSE(cache.assign(leader_epoch{-1}, offset{12}));  // a batch no leader stamped
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 0}, {2, 10}}));
  EXPECT_EQ(cache.latest_epoch(), leader_epoch{2});
}

TEST(leader_epoch_cache, an_assignment_that_breaks_the_order_replaces_what_it_contradicts) {
  // The same epoch starting earlier: a follower that truncated and fetched the epoch again from its start.
  auto cache = cache_of({{0, 0}, {2, 10}});
  EXPECT_TRUE(cache.assign(leader_epoch{2}, offset{8}));
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 0}, {2, 8}}));
  // An older epoch at a later offset than a newer one: everything from the newer one goes.
  cache = cache_of({{0, 0}, {2, 10}, {4, 20}});
  EXPECT_TRUE(cache.assign(leader_epoch{3}, offset{15}));
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 0}, {2, 10}, {3, 15}}));
  // A newer epoch at an offset an older one already covers: the older ones from there on go.
  cache = cache_of({{0, 0}, {2, 10}});
  EXPECT_TRUE(cache.assign(leader_epoch{5}, offset{10}));
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 0}, {5, 10}}));
}

TEST(leader_epoch_cache, an_epoch_ends_where_the_next_one_starts) {
  const auto cache = cache_of({{1, 0}, {3, 100}, {4, 150}});
  EXPECT_EQ(cache.end_offset_for(leader_epoch{1}, offset{200}), ends(1, 100));
  EXPECT_EQ(cache.end_offset_for(leader_epoch{3}, offset{200}), ends(3, 150));
  // The epoch being written to ends at the log end.
  EXPECT_EQ(cache.end_offset_for(leader_epoch{4}, offset{200}), ends(4, 200));
  // An epoch this log never had (no leader of epoch 2 appended here): the largest one below it, which
  // ended where epoch 3 started.
  EXPECT_EQ(cache.end_offset_for(leader_epoch{2}, offset{200}), ends(1, 100));
  // Older than any epoch known: only that the first known one starts later.
  EXPECT_EQ(cache.end_offset_for(leader_epoch{0}, offset{200}), ends(0, 0));
  // Newer than the latest, no epoch asked for, or no epochs at all: the log cannot say.
  EXPECT_EQ(cache.end_offset_for(leader_epoch{9}, offset{200}), epoch_end{});
  EXPECT_EQ(cache.end_offset_for(leader_epoch{-1}, offset{200}), epoch_end{});
  EXPECT_EQ(leader_epoch_cache{}.end_offset_for(leader_epoch{0}, offset{0}), epoch_end{});
}

// KIP-101: a follower truncates to where its latest epoch ends in the leader's log, never to its high
// watermark, so a record both replicas had is never lost and a record only the old leader had goes.
std::int64_t truncation_point(const leader_epoch_cache& follower, std::int64_t follower_end,
                              const leader_epoch_cache& leader, std::int64_t leader_end) {
  const auto answer = leader.end_offset_for(*follower.latest_epoch(), offset{leader_end});
  return std::min(answer.end.value(), follower_end);
}

TEST(leader_epoch_cache, kip_101_a_follower_keeps_what_the_new_leader_has) {
  // Both replicas have offsets 0-1 of epoch 0; the follower restarts with a high watermark of 1 while the
  // leader dies, and becomes leader in epoch 1. Truncating to the high watermark would lose offset 1.
  const auto old_leader = cache_of({{0, 0}});
  const auto new_leader = cache_of({{0, 0}, {1, 2}});
  EXPECT_EQ(truncation_point(old_leader, 2, new_leader, 2), 2);
}

TEST(leader_epoch_cache, kip_101_diverged_logs_converge_on_the_leaders) {
  // Offset 1 was written by epoch 0's leader A only; B became leader in epoch 1 and wrote its own offset 1.
  // When A comes back as a follower it must drop its offset 1, not keep it beside B's different one.
  const auto a = cache_of({{0, 0}});
  const auto b = cache_of({{0, 0}, {1, 1}});
  EXPECT_EQ(truncation_point(a, 2, b, 2), 1);
}

TEST(leader_epoch_cache, kip_279_a_follower_walks_back_over_epochs_the_leader_never_had) {
  // The follower has epochs 0 and 2; the leader has 0 and 3 (epoch 2's leader wrote only to the follower).
  // Asking for epoch 2, the leader answers with its largest epoch below it, 0, and where that ended.
  auto follower = cache_of({{0, 0}, {2, 5}});
  const auto leader = cache_of({{0, 0}, {3, 4}});
  const auto first = leader.end_offset_for(leader_epoch{2}, offset{9});
  EXPECT_EQ(first, ends(0, 4));
  // The follower truncates to 4 and drops epoch 2; its latest epoch is then 0, which ends at 4 in both logs.
  follower.truncate_from_end(first.end);
  EXPECT_EQ(contents(follower), (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 0}}));
  EXPECT_EQ(truncation_point(follower, 4, leader, 9), 4);
}

TEST(leader_epoch_cache, truncation_from_either_end) {
  auto cache = cache_of({{0, 0}, {2, 10}, {4, 20}});
  EXPECT_FALSE(cache.truncate_from_end(offset{25}));
  EXPECT_TRUE(cache.truncate_from_end(offset{20}));  // epoch 4 started at the new end: nothing of it is left
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{0, 0}, {2, 10}}));

  cache = cache_of({{0, 0}, {2, 10}, {4, 20}});
  EXPECT_FALSE(cache.truncate_from_start(offset{0}));
  // Retention moved the log start into epoch 2: epoch 0 is gone, and epoch 2 starts at the log start.
  EXPECT_TRUE(cache.truncate_from_start(offset{12}));
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{2, 12}, {4, 20}}));
  EXPECT_FALSE(cache.truncate_from_start(offset{12}));
  EXPECT_TRUE(cache.truncate_from_start(offset{20}));
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{4, 20}}));
  EXPECT_TRUE(cache.truncate_from_start(offset{30}));  // the latest epoch stays, moved to the log start
  EXPECT_EQ(contents(cache), (std::vector<std::pair<std::int32_t, std::int64_t>>{{4, 30}}));
}

TEST(leader_epoch_checkpoint, is_kafkas_text_format) {
  const auto cache = cache_of({{0, 0}, {3, 1500}});
  const auto text = encode_leader_epoch_checkpoint(cache.entries());
  EXPECT_EQ(text, "0\n2\n0 0\n3 1500\n");
  const auto decoded = decode_leader_epoch_checkpoint(text);
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(std::ranges::equal(decoded.value(), cache.entries()));
  EXPECT_TRUE(decode_leader_epoch_checkpoint("0\n0\n").value().empty());
}

TEST(leader_epoch_checkpoint, anything_else_is_corrupt) {
  for (const std::string_view text : {"", "1\n0\n", "0\n", "0\n2\n0 0\n", "0\n1\n0\n", "0\n1\n0 x\n", "0\n1\n-1 0\n",
                                      "0\n1\n0 -5\n", "0\n2\n3 10\n3 20\n", "0\n2\n3 10\n4 10\n", "0\n2\n4 10\n3 20\n",
                                      "0\n1\n0 0\nextra\n", "0\n1\n0  0\n", "0\n1\n99999999999 0\n"}) {
    EXPECT_EQ(decode_leader_epoch_checkpoint(text).error(), errc::corrupt_log) << text;
  }
}

class log_epochs_test : public ::testing::Test {
 protected:
  // recovery_point: nullopt for a clean open, else a crash's recovery from there.
  std::shared_ptr<log> open(std::optional<std::int64_t> recovery_point = std::nullopt) {
    log_config config;
    config.segment_bytes = static_cast<std::int64_t>(4 * build_simple_batch(3).size());
    auto opened = open_log({.fs = fs_,
                            .clock = &clock_,
                            .directory = dir_.path(),
                            .config = config,
                            .needs_recovery = recovery_point.has_value(),
                            .recovery_point = offset{recovery_point.value_or(INT64_MAX)}});
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  static void append(log& l, std::int32_t epoch, int batches = 1) {
    for (int i = 0; i < batches; ++i) {
      auto bytes = build_simple_batch(3);
      ASSERT_TRUE(l.append(bytes, leader_epoch{epoch}));
    }
  }
  [[nodiscard]] std::filesystem::path checkpoint() const { return dir_.path() / leader_epoch_checkpoint; }
  [[nodiscard]] std::string checkpoint_text() const {
    std::ifstream in(checkpoint());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  testing::temp_dir dir_;
  manual_clock clock_{1'700'000'000'000};
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

TEST_F(log_epochs_test, appends_record_where_each_epoch_starts) {
  auto l = open();
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{0}), epoch_end{});
  append(*l, 0, 2);  // offsets 0-5
  append(*l, 2, 1);  // 6-8
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{0}), ends(0, 6));
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{1}), ends(0, 6));
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{2}), ends(2, 9));
  // A new leader's epoch starts at the log end before it appends anything.
  l->begin_epoch(leader_epoch{3});
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{2}), ends(2, 9));
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{3}), ends(3, 9));
  append(*l, 3, 1);
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{3}), ends(3, 12));
  ASSERT_TRUE(l->close());
  EXPECT_EQ(checkpoint_text(), "0\n3\n0 0\n2 6\n3 9\n");
  // A clean restart reads the file.
  l = open();
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{0}), ends(0, 6));
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{3}), ends(3, 12));
}

// A leader replaced before it appended anything in its epoch: as a follower, told that its log diverged after
// the epoch before, it has nothing to cut but must forget that empty epoch, or it names it in every fetch.
TEST_F(log_epochs_test, truncating_at_the_log_end_drops_an_epoch_that_never_got_a_batch) {
  auto l = open();
  append(*l, 1, 2);  // offsets 0-5
  l->begin_epoch(leader_epoch{2});
  EXPECT_EQ(l->latest_epoch(), leader_epoch{2});
  ASSERT_TRUE(l->truncate_to(offset{6}));
  EXPECT_EQ(l->log_end_offset(), offset{6});
  EXPECT_EQ(l->latest_epoch(), leader_epoch{1});
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{1}), ends(1, 6));
}

TEST_F(log_epochs_test, the_checkpoint_is_written_before_the_flushed_offset_passes_an_epoch) {
  auto l = open();
  append(*l, 0, 1);
  EXPECT_FALSE(std::filesystem::exists(checkpoint()));  // appends never write it: that is disk work
  ASSERT_TRUE(l->flush(l->log_end_offset()));
  EXPECT_EQ(checkpoint_text(), "0\n1\n0 0\n");
  append(*l, 1, 1);
  ASSERT_TRUE(l->flush(l->log_end_offset()));
  EXPECT_EQ(checkpoint_text(), "0\n2\n0 0\n1 3\n");
  // A roll seals the segment and moves the flushed offset over it (inline here): the file comes first.
  append(*l, 2, 3);  // rolls at the fifth batch
  EXPECT_EQ(checkpoint_text(), "0\n3\n0 0\n1 3\n2 6\n");
}

TEST_F(log_epochs_test, a_crash_takes_the_epochs_past_the_recovery_point_from_the_batches) {
  {
    auto l = open();
    append(*l, 0, 1);
    append(*l, 4, 1);
    ASSERT_TRUE(l->flush(l->log_end_offset()));  // the file knows epochs 0 and 4
    append(*l, 6, 1);                            // 6-8, not flushed: the file does not know epoch 6
  }
  // After a crash the recovery point is 6: epoch 6 comes from its batch.
  auto l = open(6);
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{4}), ends(4, 6));
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{6}), ends(6, 9));
}

TEST_F(log_epochs_test, an_epoch_whose_batches_recovery_cut_is_forgotten) {
  {
    auto l = open();
    append(*l, 0, 1);
    append(*l, 4, 1);
    ASSERT_TRUE(l->flush(l->log_end_offset()));
    ASSERT_TRUE(l->close());
  }
  // The file says epoch 4 starts at 3; recovery from 3 finds that batch torn and cuts it.
  const auto segment = dir_.path() / "00000000000000000000.log";
  std::filesystem::resize_file(segment, std::filesystem::file_size(segment) - 1);
  auto l = open(3);
  EXPECT_EQ(l->log_end_offset(), offset{3});
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{0}), ends(0, 3));
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{4}), epoch_end{});
}

TEST_F(log_epochs_test, a_missing_or_damaged_checkpoint_is_rebuilt_from_every_batch) {
  {
    auto l = open();
    append(*l, 1, 2);
    append(*l, 3, 5);  // rolls: segments from 0 and 12
    ASSERT_TRUE(l->close());
  }
  for (const std::string damage : {"", "0\n2\n1 0\n"}) {
    if (damage.empty()) {
      std::filesystem::remove(checkpoint());
    } else {
      std::ofstream(checkpoint(), std::ios::trunc) << damage;  // says two entries, holds one
    }
    auto l = open();
    EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{1}), ends(1, 6)) << damage;
    EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{3}), ends(3, 21)) << damage;
    ASSERT_TRUE(l->close());
    EXPECT_EQ(checkpoint_text(), "0\n2\n1 0\n3 6\n");
  }
}

TEST_F(log_epochs_test, retention_moves_the_first_epoch_to_the_log_start) {
  auto l = open();
  append(*l, 0, 2);
  append(*l, 1, 7);  // segments start at 0, 12 and 24
  log_config config;
  config.segment_bytes = static_cast<std::int64_t>(4 * build_simple_batch(3).size());
  config.retention_bytes = 0;
  l->update_config(config);
  ASSERT_EQ(l->apply_retention().value(), 2u);
  EXPECT_EQ(l->log_start_offset(), offset{24});
  EXPECT_EQ(l->end_offset_for_epoch(leader_epoch{0}), ends(0, 24));  // older than any epoch left
  ASSERT_TRUE(l->close());
  EXPECT_EQ(checkpoint_text(), "0\n1\n1 24\n");
}

}  // namespace
}  // namespace ferry::storage
