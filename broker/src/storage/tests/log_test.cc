#include "storage/log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "io/faulty_file_system.h"
#include "model/testing/batch_builder.h"
#include "storage/file_names.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::build_simple_batch;
using testing::base_offsets;

constexpr std::int64_t start_ms = 1'700'000'000'000;
// Size of every build_simple_batch(3, ...): the record contents are the same whatever the offsets and time.
const std::uint64_t batch_size = build_simple_batch(3).size();

std::vector<std::byte> idempotent_batch(std::int16_t epoch, std::int32_t sequence, int records = 2) {
  model::testing::batch_spec spec;
  for (int i = 0; i < records; ++i) spec.records.push_back({"k", "v-" + std::to_string(i), {}, i});
  spec.producer = producer_id{7};
  spec.epoch = producer_epoch{epoch};
  spec.base_sequence = sequence;
  return model::testing::build_batch(spec);
}

class log_test : public ::testing::Test {
 protected:
  result<std::shared_ptr<log>> try_open(const log_config& config, bool recovery = false) {
    return open_log({.fs = fs_,
                     .clock = &clock_,
                     .directory = dir_.path(),
                     .config = config,
                     .needs_recovery = recovery,
                     .recovery_point = recovery ? offset{0} : offset{INT64_MAX}});
  }
  std::shared_ptr<log> open(const log_config& config, bool recovery = false) {
    auto opened = try_open(config, recovery);
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  // Appends a client's batch (the log assigns offsets in the caller's buffer, so it takes a copy).
  static result<append_result> send(log& l, std::vector<std::byte> bytes) { return l.append(bytes, leader_epoch{5}); }
  // Appends a batch of three records with timestamps ts, ts + 1, ts + 2; returns its bytes as stored.
  std::vector<std::byte> append(log& l, std::int64_t ts = start_ms) {
    auto bytes = build_simple_batch(3, offset{0}, ts);
    const auto appended = l.append(bytes, leader_epoch{5});
    EXPECT_TRUE(appended) << appended.error().message();
    return bytes;
  }
  static log_config small_segments(std::uint64_t batches_per_segment) {
    log_config config;
    config.segment_bytes = static_cast<std::int64_t>(batches_per_segment * batch_size);
    config.index_interval_bytes = static_cast<std::int32_t>(batch_size);  // an entry every other batch
    return config;
  }
  std::filesystem::path path(std::int64_t base, std::string_view suffix) const {
    return dir_.path() / offset_file_name(offset{base}, suffix);
  }
  std::vector<std::int64_t> read_bases(log& l, std::int64_t from, std::uint64_t max_bytes = UINT64_MAX,
                                       std::int64_t upto = INT64_MAX) {
    const auto read = l.read(offset{from}, max_bytes, offset{upto});
    EXPECT_TRUE(read) << read.error().message();
    return read ? base_offsets(read.value()) : std::vector<std::int64_t>{};
  }
  static std::vector<std::int64_t> bases(std::int64_t first, std::int64_t end) {
    std::vector<std::int64_t> out;
    for (std::int64_t o = first; o < end; o += 3) out.push_back(o);
    return out;
  }

  testing::temp_dir dir_;
  manual_clock clock_{start_ms};
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

TEST_F(log_test, a_new_log_is_empty) {
  auto l = open(log_config{});
  EXPECT_EQ(l->log_start_offset(), offset{0});
  EXPECT_EQ(l->log_end_offset(), offset{0});
  EXPECT_EQ(l->segment_count(), 1u);
  EXPECT_EQ(l->read(offset{0}, 100, offset{0}).value().total_bytes, 0u);
  EXPECT_FALSE(l->offset_for_timestamp(0).value());
  EXPECT_FALSE(l->max_timestamp());
  EXPECT_TRUE(std::filesystem::exists(path(0, log_suffix)));
}

TEST_F(log_test, appends_read_back_verbatim_across_many_segments) {
  auto l = open(small_segments(4));
  std::vector<std::byte> written;
  for (int i = 0; i < 100; ++i) {
    auto bytes = build_simple_batch(3, offset{0}, start_ms + i);
    const auto appended = l->append(bytes, leader_epoch{5}).value();
    EXPECT_EQ(appended.base_offset, offset{3 * i});
    EXPECT_EQ(appended.last_offset, offset{3 * i + 2});
    EXPECT_EQ(appended.log_append_time_ms, -1);
    EXPECT_FALSE(appended.duplicate);
    written.insert(written.end(), bytes.begin(), bytes.end());
  }
  EXPECT_EQ(l->log_end_offset(), offset{300});
  EXPECT_EQ(l->segment_count(), 25u);
  EXPECT_EQ(l->size_bytes(), 100 * batch_size);
  EXPECT_EQ(testing::file_size(path(12, log_suffix)), 4 * batch_size);

  const auto all = l->read(offset{0}, UINT64_MAX, offset{300}).value();
  EXPECT_EQ(all.slices.size(), 25u);
  EXPECT_EQ(testing::read_all(all), written);
  const auto first = testing::split_batches(testing::read_all(all)).front();
  EXPECT_EQ(model::batch_header_view(first).partition_leader_epoch(), leader_epoch{5});

  // Any offset, including one inside a batch, reads from the batch that holds it.
  for (int o = 0; o < 300; ++o) EXPECT_EQ(read_bases(*l, o, 1), std::vector<std::int64_t>{o / 3 * 3}) << o;
}

// A follower's lag in bytes: the batches from the one holding its log end to the leader's, across segments.
TEST_F(log_test, counts_the_bytes_from_an_offset_to_the_end) {
  auto l = open(small_segments(4));
  for (int i = 0; i < 10; ++i) append(*l, start_ms + i);  // 30 offsets in three segments
  EXPECT_EQ(l->size_bytes_from(offset{0}).value(), 10 * batch_size);
  EXPECT_EQ(l->size_bytes_from(offset{3}).value(), 9 * batch_size);
  EXPECT_EQ(l->size_bytes_from(offset{13}).value(), 6 * batch_size);  // inside the fifth batch, second segment
  EXPECT_EQ(l->size_bytes_from(offset{29}).value(), batch_size);
  EXPECT_EQ(l->size_bytes_from(offset{30}).value(), 0u);
  EXPECT_EQ(l->size_bytes_from(offset{99}).value(), 0u);
}

TEST_F(log_test, reads_return_whole_batches_and_at_least_one) {
  auto l = open(small_segments(4));
  for (int i = 0; i < 10; ++i) append(*l);
  EXPECT_EQ(read_bases(*l, 0, 1), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(read_bases(*l, 0, batch_size), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(read_bases(*l, 0, 2 * batch_size + batch_size / 2), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(read_bases(*l, 4, 3 * batch_size), (std::vector<std::int64_t>{3, 6, 9}));
  // Across a segment boundary: two slices, still whole batches.
  const auto read = l->read(offset{6}, 5 * batch_size - 1, offset{30}).value();
  EXPECT_EQ(read.slices.size(), 2u);
  EXPECT_EQ(base_offsets(read), (std::vector<std::int64_t>{6, 9, 12, 15}));
  EXPECT_EQ(read.total_bytes, 4 * batch_size);
}

TEST_F(log_test, reads_stop_before_the_batch_that_reaches_upto) {
  auto l = open(small_segments(4));
  for (int i = 0; i < 10; ++i) append(*l);
  EXPECT_EQ(read_bases(*l, 0, UINT64_MAX, 9), (std::vector<std::int64_t>{0, 3, 6}));
  EXPECT_EQ(read_bases(*l, 0, UINT64_MAX, 8), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(read_bases(*l, 4, UINT64_MAX, 15), (std::vector<std::int64_t>{3, 6, 9, 12}));
  EXPECT_TRUE(read_bases(*l, 9, UINT64_MAX, 9).empty());
  EXPECT_TRUE(read_bases(*l, 9, UINT64_MAX, 10).empty());
}

TEST_F(log_test, offsets_outside_the_log_are_out_of_range) {
  auto l = open(small_segments(2));
  for (int i = 0; i < 10; ++i) append(*l);
  EXPECT_EQ(l->read(offset{31}, 100, offset{100}).error(), errc::offset_out_of_range);
  EXPECT_EQ(l->read(offset{-1}, 100, offset{100}).error(), errc::offset_out_of_range);
  EXPECT_TRUE(read_bases(*l, 30).empty());  // the log end: nothing yet, not an error
  log_config config = small_segments(2);
  config.retention_bytes = 4 * static_cast<std::int64_t>(batch_size);
  l->update_config(config);
  EXPECT_EQ(l->apply_retention().value(), 3u);
  EXPECT_EQ(l->log_start_offset(), offset{18});
  EXPECT_EQ(l->read(offset{17}, 100, offset{100}).error(), errc::offset_out_of_range);
  EXPECT_EQ(read_bases(*l, 18), (std::vector<std::int64_t>{18, 21, 24, 27}));
}

TEST_F(log_test, finds_offsets_by_timestamp_across_segments) {
  auto l = open(small_segments(3));
  // Batch i holds offsets 3i..3i+2 with timestamps t, t+1, t+2 (max timestamps 1002, 3002, 2002, 4002, ...).
  // A lookup finds the first batch whose max timestamp is at least the target, and in it the first record
  // that is, as Kafka does.
  const std::int64_t times[] = {1000, 3000, 2000, 4000, 4000, 6000, 5000, 7000, 8000, 9000};
  for (const auto t : times) append(*l, t);
  auto lookup = [&](std::int64_t ts) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
    const auto found = l->offset_for_timestamp(ts).value();
    if (!found) return std::nullopt;
    return std::pair(found->found.value(), found->timestamp);
  };
  using match = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(lookup(0), match(0, 1000));
  EXPECT_EQ(lookup(1001), match(1, 1001));
  EXPECT_EQ(lookup(1002), match(2, 1002));
  EXPECT_EQ(lookup(1003), match(3, 3000));
  EXPECT_EQ(lookup(2500), match(3, 3000));  // the first batch at least that new, not the closest
  EXPECT_EQ(lookup(3003), match(9, 4000));
  EXPECT_EQ(lookup(4002), match(11, 4002));
  EXPECT_EQ(lookup(5500), match(15, 6000));
  EXPECT_EQ(lookup(9002), match(29, 9002));
  EXPECT_FALSE(lookup(9003));
  const auto newest = l->max_timestamp();
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->found, offset{29});  // the record, not its batch (offsets 27-29, 9000-9002)
  EXPECT_EQ(newest->timestamp, 9002);
}

TEST_F(log_test, rolls_when_the_next_batch_would_not_fit) {
  auto l = open(small_segments(3));
  for (int i = 0; i < 10; ++i) append(*l);
  EXPECT_EQ(l->segment_count(), 4u);
  for (const int base : {0, 9, 18, 27}) EXPECT_TRUE(std::filesystem::exists(path(base, log_suffix))) << base;
  EXPECT_EQ(testing::file_size(path(9, log_suffix)), 3 * batch_size);
  // A batch larger than segment.bytes still goes in, alone.
  log_config tiny;
  tiny.segment_bytes = 10;
  l->update_config(tiny);
  append(*l);
  append(*l);
  EXPECT_EQ(l->segment_count(), 6u);
  EXPECT_EQ(read_bases(*l, 33), (std::vector<std::int64_t>{33}));
}

TEST_F(log_test, rolls_when_the_segment_is_older_than_segment_ms) {
  log_config config;
  config.segment_ms = 1000;
  auto l = open(config);
  append(*l);
  clock_.advance(std::chrono::milliseconds(1000));
  append(*l);
  EXPECT_EQ(l->segment_count(), 1u);
  clock_.advance(std::chrono::milliseconds(1));
  append(*l);
  EXPECT_EQ(l->segment_count(), 2u);
  // The age counts from the new segment's first append.
  clock_.advance(std::chrono::milliseconds(1000));
  append(*l);
  EXPECT_EQ(l->segment_count(), 2u);
  clock_.advance(std::chrono::milliseconds(1));
  append(*l);
  EXPECT_EQ(l->segment_count(), 3u);
  EXPECT_EQ(read_bases(*l, 0), bases(0, 15));
}

TEST_F(log_test, rolls_when_an_index_is_full) {
  log_config config;
  config.segment_index_bytes = 24;  // three offset entries, two time entries
  config.index_interval_bytes = 0;  // an entry for every batch after the first
  auto l = open(config);
  for (int i = 0; i < 3; ++i) append(*l, start_ms + i);
  EXPECT_EQ(l->segment_count(), 1u);
  append(*l, start_ms + 3);  // the time index holds two entries: full
  EXPECT_EQ(l->segment_count(), 2u);
  EXPECT_EQ(read_bases(*l, 0), bases(0, 12));
  // Batch 1 (offsets 3-5) holds records at start_ms + 1, + 2 and + 3: the answer is its last record.
  EXPECT_EQ(l->offset_for_timestamp(start_ms + 3).value()->found, offset{5});
}

// flush.messages: an append that reaches it owes a flush; until the flush is done, the batch is not visible
// (and the caller does not acknowledge it). Appends never fsync themselves.
TEST_F(log_test, a_batch_that_owes_a_flush_is_visible_only_once_flushed) {
  log_config config;
  auto l = open(config);
  append(*l);
  EXPECT_EQ(l->visible_end(), offset{3});  // the default policy leaves flushing to the OS
  EXPECT_EQ(l->flushed_offset(), offset{0});
  config.flush_messages = 5;
  l->update_config(config);
  const auto owed = send(*l, build_simple_batch(3));  // 6 unflushed records
  ASSERT_TRUE(owed);
  EXPECT_TRUE(owed.value().flush_required);
  EXPECT_EQ(l->log_end_offset(), offset{6});
  EXPECT_EQ(l->visible_end(), offset{0});  // nothing past the recovery point while a flush is owed
  const auto later = send(*l, build_simple_batch(1));
  ASSERT_TRUE(later);
  EXPECT_EQ(l->visible_end(), offset{0});
  ASSERT_TRUE(l->flush(offset{6}));
  EXPECT_GE(l->flushed_offset(), offset{6});
  EXPECT_EQ(l->visible_end(), offset{7});
}

TEST_F(log_test, flush_ms_flushes_from_the_upkeep_thread) {
  log_config config;
  config.flush_ms = 1000;
  auto l = open(config);
  append(*l);
  clock_.advance(std::chrono::milliseconds(999));
  ASSERT_TRUE(l->maybe_flush_by_time());
  EXPECT_EQ(l->flushed_offset(), offset{0});
  clock_.advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(l->maybe_flush_by_time());
  EXPECT_EQ(l->flushed_offset(), offset{3});
}

// fsyncgate: after a failed fsync the kernel may have dropped the pages, and a later fsync may succeed
// anyway. So the dir goes offline: the record that owed the flush never becomes visible, and nothing is
// appended or read there again until a restart recovers from what is on disk.
TEST_F(log_test, a_failed_fsync_takes_the_log_dir_offline) {
  auto faulty = std::make_shared<io::faulty_file_system>(fs_);
  fs_ = faulty;
  log_config config;
  config.flush_messages = 1;
  auto l = open(config);
  const auto first = send(*l, build_simple_batch(3));
  ASSERT_TRUE(first && first.value().flush_required);
  ASSERT_TRUE(l->flush(offset{3}));
  EXPECT_EQ(l->visible_end(), offset{3});

  const auto second = send(*l, build_simple_batch(3));
  ASSERT_TRUE(second && second.value().flush_required);
  faulty->fail_sync = true;
  const auto failed = l->flush(offset{6});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error(), std::error_code(EIO, std::system_category()));
  faulty->fail_sync = false;  // a later fsync "succeeding" proves nothing
  EXPECT_EQ(l->flush(offset{6}).error(), errc::log_dir_offline);
  EXPECT_EQ(l->visible_end(), offset{3});
  EXPECT_EQ(send(*l, build_simple_batch(1)).error(), errc::log_dir_offline);
  EXPECT_EQ(l->read(offset{0}, UINT64_MAX, offset{3}).error(), errc::log_dir_offline);
}

TEST_F(log_test, recovery_cuts_garbage_after_the_last_batch) {
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 10; ++i) append(*l);
    // No close: a crash.
  }
  const auto active = path(24, log_suffix);
  const auto size = testing::file_size(active);
  testing::append_bytes(active, std::string(100, 'x'));
  auto l = open(small_segments(4), true);
  EXPECT_EQ(testing::file_size(active), size);
  EXPECT_EQ(l->log_end_offset(), offset{30});
  EXPECT_EQ(read_bases(*l, 0), bases(0, 30));
  EXPECT_EQ(send(*l, build_simple_batch(1)).value().base_offset, offset{30});
}

TEST_F(log_test, recovery_cuts_from_a_damaged_batch_onwards) {
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 11; ++i) append(*l);
  }
  // The active segment (base 24) holds batches 24, 27 and 30; damage a record of 27.
  testing::flip_byte(path(24, log_suffix), 2 * batch_size - 3);
  auto l = open(small_segments(4), true);
  EXPECT_EQ(l->log_end_offset(), offset{27});
  EXPECT_EQ(testing::file_size(path(24, log_suffix)), batch_size);
  EXPECT_EQ(read_bases(*l, 0), bases(0, 27));
  EXPECT_EQ(send(*l, build_simple_batch(3)).value().base_offset, offset{27});
  EXPECT_EQ(read_bases(*l, 24), (std::vector<std::int64_t>{24, 27}));
}

// Found by segment_recovery_fuzz: a garbage segment named inside the one before it used to be cut by recovery
// and kept as the active segment, so the log ended below offsets it held and handed them out again.
TEST_F(log_test, a_segment_inside_the_one_before_it_is_refused_with_or_without_recovery) {
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 6; ++i) append(*l);  // segments 0 and 12
    ASSERT_TRUE(l->close());
  }
  testing::append_bytes(path(2, log_suffix), std::string(100, 'x'));
  EXPECT_EQ(try_open(small_segments(4)).error(), errc::corrupt_log);
  EXPECT_EQ(try_open(small_segments(4), true).error(), errc::corrupt_log);
}

// Found with segment_recovery_fuzz's harness: a base offset is outside the CRC, and one near INT64_MAX in a
// stored batch made the offset arithmetic of opening, replaying and appending overflow.
TEST_F(log_test, a_damaged_base_offset_near_int64_max_is_damage_not_an_overflow) {
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 6; ++i) append(*l);  // segments 0 and 12; 12 holds batches 12 and 15
    ASSERT_TRUE(l->close());
  }
  {
    std::fstream f(path(12, log_suffix), std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(batch_size));
    f.write("\x7f\xff\xff\xff\xff\xff\xff\xff", 8);
  }
  // Trusted, the bad batch only ends what the active segment can serve; recovered, it is cut.
  auto trusted = open(small_segments(4));
  EXPECT_EQ(read_bases(*trusted, 0, UINT64_MAX, 15), bases(0, 15));
  ASSERT_TRUE(trusted->close());
  auto recovered = open(small_segments(4), true);
  EXPECT_EQ(recovered->log_end_offset(), offset{15});
  EXPECT_EQ(read_bases(*recovered, 0), bases(0, 15));
}

TEST_F(log_test, missing_and_damaged_indexes_are_rebuilt_without_recovery) {
  {
    auto l = open(small_segments(6));
    for (int i = 0; i < 15; ++i) append(*l, start_ms + 10 * i);
    ASSERT_TRUE(l->close());
  }
  const auto sealed_index = path(18, index_suffix);
  const auto active_time_index = path(36, time_index_suffix);
  const auto original_index = testing::file_size(sealed_index);
  ASSERT_GT(original_index, 0u);
  std::filesystem::remove(sealed_index);
  std::filesystem::remove(active_time_index);
  testing::append_bytes(path(0, index_suffix), "torn");
  auto l = open(small_segments(6));
  EXPECT_EQ(testing::file_size(sealed_index), original_index);
  EXPECT_TRUE(std::filesystem::exists(active_time_index));
  EXPECT_EQ(testing::file_size(path(0, index_suffix)) % 8, 0u);
  for (int o = 0; o < 45; ++o) EXPECT_EQ(read_bases(*l, o, 1), std::vector<std::int64_t>{o / 3 * 3}) << o;
  EXPECT_EQ(l->offset_for_timestamp(start_ms + 135).value()->found, offset{42});
}

TEST_F(log_test, a_clean_restart_trusts_the_files) {
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 10; ++i) append(*l, start_ms + i);
    ASSERT_TRUE(send(*l, idempotent_batch(0, 0)));
    ASSERT_TRUE(l->close());
    EXPECT_EQ(send(*l, build_simple_batch(1)).error(), errc::log_closed);
  }
  // A damaged record in the last batch, which a recovery would cut: a clean restart does not look.
  testing::flip_byte(path(24, log_suffix), testing::file_size(path(24, log_suffix)) - 2);
  {
    auto l = open(small_segments(4));
    EXPECT_EQ(l->log_start_offset(), offset{0});
    EXPECT_EQ(l->log_end_offset(), offset{32});
    EXPECT_EQ(l->segment_count(), 3u);
    EXPECT_EQ(l->size_bytes(), 10 * batch_size + idempotent_batch(0, 0).size());
    EXPECT_EQ(l->max_timestamp()->found, offset{29});  // the last record of batch 27-29
    EXPECT_EQ(l->producer(producer_id{7})->batches.back().last_offset, offset{31});
    // The damaged batch is still there: nothing scanned the segment.
    const auto served = testing::split_batches(testing::read_all(l->read(offset{20}, UINT64_MAX, offset{32}).value()));
    ASSERT_EQ(served.size(), 5u);
    EXPECT_EQ(model::batch_header_view(served.back()).base_offset(), offset{30});
    EXPECT_EQ(model::validate_batch(served.back(), {.from_client = false}), model::errc::crc_mismatch);
  }
  auto recovered = open(small_segments(4), true);
  EXPECT_EQ(recovered->log_end_offset(), offset{30});
}

TEST_F(log_test, retention_by_bytes_removes_the_oldest_segments) {
  log_config config = small_segments(3);
  auto l = open(config);
  for (int i = 0; i < 30; ++i) append(*l);
  EXPECT_EQ(l->segment_count(), 10u);
  EXPECT_EQ(l->apply_retention().value(), 0u);  // unlimited by default (and nothing is a week old)
  config.retention_bytes = static_cast<std::int64_t>(10 * batch_size);
  l->update_config(config);
  // 30 batches in segments of 3: removing six leaves 12 batches, removing a seventh would leave 9 < 10.
  EXPECT_EQ(l->apply_retention().value(), 6u);
  EXPECT_EQ(l->segment_count(), 4u);
  EXPECT_EQ(l->log_start_offset(), offset{54});
  EXPECT_EQ(l->size_bytes(), 12 * batch_size);
  EXPECT_FALSE(std::filesystem::exists(path(45, log_suffix)));
  EXPECT_FALSE(std::filesystem::exists(path(45, index_suffix)));
  EXPECT_FALSE(std::filesystem::exists(path(45, snapshot_suffix)));
  EXPECT_TRUE(std::filesystem::exists(path(54, log_suffix)));
  EXPECT_TRUE(std::filesystem::exists(path(54, snapshot_suffix)));
  EXPECT_EQ(l->apply_retention().value(), 0u);
  // The active segment is never removed.
  config.retention_bytes = 0;
  l->update_config(config);
  EXPECT_EQ(l->apply_retention().value(), 3u);
  EXPECT_EQ(l->log_start_offset(), offset{81});
  EXPECT_EQ(read_bases(*l, 81), bases(81, 90));
  // The start survives a restart.
  ASSERT_TRUE(l->close());
  EXPECT_EQ(open(config)->log_start_offset(), offset{81});
}

TEST_F(log_test, retention_by_time_uses_each_segments_newest_timestamp) {
  log_config config = small_segments(2);
  config.retention_ms = 10'000;
  auto l = open(config);
  for (int i = 0; i < 10; ++i) {
    append(*l, clock_.now_ms());  // max timestamp now + 2
    clock_.advance(std::chrono::milliseconds(1000));
  }
  // Segment k holds batches 2k and 2k+1, newest at start + (2k+1) * 1000 + 2; now is start + 10000.
  EXPECT_EQ(l->apply_retention().value(), 0u);
  clock_.advance(std::chrono::milliseconds(1002));  // segment 0 reaches exactly 10000 ms of age
  EXPECT_EQ(l->apply_retention().value(), 0u);
  clock_.advance(std::chrono::milliseconds(1));
  EXPECT_EQ(l->apply_retention().value(), 1u);
  EXPECT_EQ(l->log_start_offset(), offset{6});
  clock_.advance(std::chrono::hours(1));
  EXPECT_EQ(l->apply_retention().value(), 3u);  // all but the active one
  EXPECT_EQ(l->segment_count(), 1u);
  EXPECT_EQ(l->log_start_offset(), offset{24});
}

TEST_F(log_test, a_held_slice_reads_a_deleted_segment) {
  log_config config = small_segments(2);
  auto l = open(config);
  std::vector<std::byte> first;
  for (int i = 0; i < 6; ++i) {
    auto bytes = append(*l);
    if (i < 2) first.insert(first.end(), bytes.begin(), bytes.end());
  }
  const auto held = l->read(offset{0}, 2 * batch_size, offset{100}).value();
  ASSERT_EQ(held.slices.size(), 1u);
  config.retention_bytes = 0;
  l->update_config(config);
  ASSERT_EQ(l->apply_retention().value(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path(0, log_suffix)));
  EXPECT_EQ(testing::read_slice(held.slices[0]), first);
}

TEST_F(log_test, a_retried_batch_gets_its_original_offsets_and_writes_nothing) {
  auto l = open(small_segments(4));
  append(*l);
  std::vector<std::vector<std::byte>> sent;
  for (int i = 0; i < 6; ++i) {
    sent.push_back(idempotent_batch(2, 2 * i));
    ASSERT_TRUE(send(*l, sent.back()));
    append(*l);
  }
  const auto end = l->log_end_offset();
  const auto size = l->size_bytes();
  for (int i = 1; i < 6; ++i) {
    const auto appended = send(*l, sent[i]).value();
    EXPECT_TRUE(appended.duplicate);
    EXPECT_EQ(appended.base_offset, offset{3 + 5 * i});
    EXPECT_EQ(appended.last_offset, offset{3 + 5 * i + 1});
  }
  EXPECT_EQ(send(*l, sent[0]).error(), errc::out_of_order_sequence);
  EXPECT_EQ(send(*l, idempotent_batch(2, 13)).error(), errc::out_of_order_sequence);
  EXPECT_EQ(send(*l, idempotent_batch(1, 12)).error(), errc::invalid_producer_epoch);
  EXPECT_EQ(l->log_end_offset(), end);
  EXPECT_EQ(l->size_bytes(), size);
  EXPECT_EQ(send(*l, idempotent_batch(2, 12)).value().base_offset, end);
}

TEST_F(log_test, producer_state_survives_a_clean_restart) {
  std::optional<producer_entry> before;
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 8; ++i) {
      ASSERT_TRUE(send(*l, idempotent_batch(0, 2 * i)));
    }
    before = l->producer(producer_id{7});
    ASSERT_TRUE(l->close());
  }
  EXPECT_TRUE(std::filesystem::exists(path(16, snapshot_suffix)));
  auto l = open(small_segments(4));
  EXPECT_EQ(l->producer(producer_id{7}), before);
  EXPECT_TRUE(send(*l, idempotent_batch(0, 14)).value().duplicate);
  EXPECT_EQ(send(*l, idempotent_batch(0, 17)).error(), errc::out_of_order_sequence);
}

// Only a snapshot remembers batches whose segment retention removed: replaying the log could not.
TEST_F(log_test, producer_state_comes_from_the_snapshot_after_a_clean_restart) {
  const std::uint64_t idempotent_size = idempotent_batch(0, 0).size();
  log_config config;
  config.segment_bytes = static_cast<std::int64_t>(2 * idempotent_size);
  {
    auto l = open(config);
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(send(*l, idempotent_batch(0, 2 * i)));
    config.retention_bytes = static_cast<std::int64_t>(3 * idempotent_size);
    l->update_config(config);
    ASSERT_EQ(l->apply_retention().value(), 1u);  // offsets 0-3: sequences 0-3
    ASSERT_TRUE(l->close());
  }
  auto l = open(config);
  EXPECT_EQ(l->producer(producer_id{7})->batches.front().first_sequence, 2);
  EXPECT_TRUE(send(*l, idempotent_batch(0, 2)).value().duplicate);
}

TEST_F(log_test, producer_state_survives_a_crash_from_snapshots_or_from_the_log_alone) {
  std::optional<producer_entry> before;
  {
    auto l = open(small_segments(3));
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(send(*l, idempotent_batch(0, 2 * i)));
      append(*l);
    }
    before = l->producer(producer_id{7});
    // No close: the newest snapshot is the one the last roll wrote.
  }
  {
    auto l = open(small_segments(3), true);
    EXPECT_EQ(l->producer(producer_id{7}), before);
  }
  for (const auto& name : std::filesystem::directory_iterator(dir_.path())) {
    if (name.path().extension() == snapshot_suffix) std::filesystem::remove(name.path());
  }
  auto l = open(small_segments(3), true);
  EXPECT_EQ(l->producer(producer_id{7}), before);
  EXPECT_TRUE(send(*l, idempotent_batch(0, 16)).value().duplicate);
}

TEST_F(log_test, a_damaged_snapshot_falls_back_to_replaying_the_log) {
  std::optional<producer_entry> before;
  {
    auto l = open(small_segments(4));
    for (int i = 0; i < 6; ++i) {
      ASSERT_TRUE(send(*l, idempotent_batch(0, 2 * i)));
    }
    before = l->producer(producer_id{7});
    ASSERT_TRUE(l->close());
  }
  testing::flip_byte(path(12, snapshot_suffix), 8);
  auto l = open(small_segments(4));
  EXPECT_EQ(l->producer(producer_id{7}), before);
}

TEST_F(log_test, a_failed_write_leaves_the_log_consistent) {
  auto faulty = std::make_shared<io::faulty_file_system>(fs_);
  fs_ = faulty;
  log_config config = small_segments(4);
  config.index_interval_bytes = 0;
  auto l = open(config);
  for (int i = 0; i < 3; ++i) append(*l);
  const auto size = testing::file_size(path(0, log_suffix));

  // A torn batch write: the disk is full.
  faulty->write_errno = ENOSPC;
  faulty->fail_writes_after_bytes = 10;
  const auto failed = send(*l, build_simple_batch(3));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error(), std::error_code(ENOSPC, std::system_category()));
  EXPECT_EQ(l->log_end_offset(), offset{9});
  EXPECT_EQ(testing::file_size(path(0, log_suffix)), size);

  // The batch lands but its index entry does not.
  faulty->fail_writes_after_bytes = static_cast<std::int64_t>(batch_size) + 3;
  EXPECT_FALSE(send(*l, build_simple_batch(3)));
  EXPECT_EQ(l->log_end_offset(), offset{9});
  EXPECT_EQ(testing::file_size(path(0, log_suffix)), size);
  EXPECT_EQ(testing::file_size(path(0, index_suffix)), 2u * 8);

  faulty->fail_writes_after_bytes = -1;
  for (int i = 0; i < 3; ++i) append(*l);
  EXPECT_EQ(read_bases(*l, 0), bases(0, 18));
  // A crash now: the recovered log is the same.
  l.reset();
  auto recovered = open(config, true);
  EXPECT_EQ(recovered->log_end_offset(), offset{18});
  EXPECT_EQ(read_bases(*recovered, 0), bases(0, 18));
}

// An I/O error (not a full disk) writing a batch is a failing disk: the dir goes offline, as after a failed
// fsync, and the append is not acknowledged.
TEST_F(log_test, an_io_error_writing_takes_the_log_dir_offline) {
  auto faulty = std::make_shared<io::faulty_file_system>(fs_);
  fs_ = faulty;
  auto l = open(log_config{});
  append(*l);
  faulty->fail_writes_after_bytes = 0;
  EXPECT_EQ(send(*l, build_simple_batch(3)).error(), std::error_code(EIO, std::system_category()));
  faulty->fail_writes_after_bytes = -1;
  EXPECT_EQ(send(*l, build_simple_batch(3)).error(), errc::log_dir_offline);
}

TEST_F(log_test, log_append_time_stamps_the_batch) {
  log_config config;
  config.log_append_time = true;
  auto l = open(config);
  clock_.advance(std::chrono::hours(1));
  const auto appended = send(*l, build_simple_batch(3, offset{0}, 5)).value();
  EXPECT_EQ(appended.log_append_time_ms, clock_.now_ms());
  const auto stored = testing::read_all(l->read(offset{0}, UINT64_MAX, offset{3}).value());
  EXPECT_FALSE(model::validate_batch(stored, {.from_client = false}));
  const model::batch_header_view header(stored);
  EXPECT_EQ(header.ts_type(), model::timestamp_type::log_append_time);
  EXPECT_EQ(header.max_timestamp(), clock_.now_ms());
  EXPECT_EQ(l->offset_for_timestamp(clock_.now_ms()).value()->found, offset{0});
}

// Readers and retention race an appender; every read must see whole, valid, contiguous batches.
TEST_F(log_test, concurrent_reads_see_a_consistent_prefix) {
  log_config config = small_segments(5);
  config.retention_bytes = static_cast<std::int64_t>(40 * batch_size);
  auto l = open(config);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  auto reader = [&](unsigned seed) {
    std::mt19937 random(seed);
    while (!done.load()) {
      const std::int64_t start = l->log_start_offset().value();
      const std::int64_t end = l->log_end_offset().value();
      const std::int64_t from = start + static_cast<std::int64_t>(random() % (end - start + 1));
      const auto read = l->read(offset{from}, random() % (8 * batch_size), offset{INT64_MAX});
      if (!read) {
        EXPECT_EQ(read.error(), errc::offset_out_of_range);  // retention overtook us
        continue;
      }
      const auto found = base_offsets(read.value());
      for (std::size_t i = 0; i < found.size(); ++i)
        EXPECT_EQ(found[i], found.front() + 3 * static_cast<std::int64_t>(i));
      if (from < end) {
        EXPECT_FALSE(found.empty());
        if (!found.empty()) {
          EXPECT_EQ(found.front(), from / 3 * 3);
        }
      }
      ++reads;
    }
  };
  std::thread first(reader, 1);
  std::thread second(reader, 2);
  for (int i = 0; i < 1000; ++i) {
    append(*l);
    if (i % 50 == 0) {
      EXPECT_TRUE(l->apply_retention());  // not ASSERT: the readers must be joined
    }
  }
  done = true;
  first.join();
  second.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(l->log_end_offset(), offset{3000});
}

}  // namespace
}  // namespace ferry::storage
