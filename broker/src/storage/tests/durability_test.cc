// What the storage layer promises about data on disk: recovery never cuts what was flushed, a damaged index
// is rebuilt (never a reason for a partition to stay unreadable), disk work happens in the background,
// deleted segments wait out file.delete.delay.ms, checkpoints survive restarts, and a full disk is noticed.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <deque>
#include <filesystem>

#include "io/faulty_file_system.h"
#include "model/testing/batch_builder.h"
#include "storage/background.h"
#include "storage/file_names.h"
#include "storage/log.h"
#include "storage/log_dir.h"
#include "storage/log_manager.h"
#include "storage/offset_checkpoint.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::build_simple_batch;

const std::uint64_t batch_size = build_simple_batch(3).size();

// Background work a test runs when it chooses: queued, and delayed work by its delay.
class manual_background final : public background {
 public:
  void run(std::function<void()> work) override { soon_.push_back(std::move(work)); }
  void run_after(std::chrono::milliseconds delay, std::function<void()> work) override {
    later_.push_back({delay, std::move(work)});
  }
  std::size_t run_soon() {
    std::size_t n = 0;
    while (!soon_.empty()) {
      auto work = std::move(soon_.front());
      soon_.pop_front();
      work();
      ++n;
    }
    return n;
  }
  // Runs the delayed work whose delay is at most `elapsed`; returns how much ran.
  std::size_t run_delayed(std::chrono::milliseconds elapsed) {
    std::size_t n = 0;
    for (auto it = later_.begin(); it != later_.end();) {
      if (it->first <= elapsed) {
        it->second();
        it = later_.erase(it);
        ++n;
      } else {
        ++it;
      }
    }
    return n;
  }
  [[nodiscard]] std::size_t queued() const { return soon_.size(); }

 private:
  std::deque<std::function<void()>> soon_;
  std::vector<std::pair<std::chrono::milliseconds, std::function<void()>>> later_;
};

class durability_test : public ::testing::Test {
 protected:
  std::shared_ptr<log> open(const log_config& config, bool recovery = false, offset recovery_point = offset{0},
                            background* work = nullptr) {
    auto opened = open_log({.fs = fs_,
                            .clock = &clock_,
                            .directory = dir_.path() / "t-0",
                            .config = config,
                            .needs_recovery = recovery,
                            .recovery_point = recovery_point,
                            .work = work});
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  static log_config small_segments(std::uint64_t batches_per_segment) {
    log_config config;
    config.segment_bytes = static_cast<std::int64_t>(batches_per_segment * batch_size);
    config.index_interval_bytes = static_cast<std::int32_t>(batch_size);
    return config;
  }
  static void append(log& l, int batches) {
    for (int i = 0; i < batches; ++i) {
      auto bytes = build_simple_batch(3);
      const auto appended = l.append(bytes, leader_epoch{1});
      ASSERT_TRUE(appended) << appended.error().message();
    }
  }
  std::filesystem::path path(std::int64_t base, std::string_view suffix) const {
    return dir_.path() / "t-0" / offset_file_name(offset{base}, suffix);
  }
  static std::vector<std::int64_t> bases(log& l, std::int64_t from) {
    const auto read = l.read(offset{from}, UINT64_MAX, l.log_end_offset());
    EXPECT_TRUE(read) << read.error().message();
    return read ? testing::base_offsets(read.value()) : std::vector<std::int64_t>{};
  }

  testing::temp_dir dir_;
  manual_clock clock_;
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

// An operator deletes the *.index files (a common step), and one old, flushed batch has a bad CRC: recovery
// rebuilds the indexes, keeps the damaged segment readable up to the bad batch, and deletes nothing after it.
TEST_F(durability_test, recovery_below_the_recovery_point_keeps_every_later_segment) {
  {
    auto l = open(small_segments(4));
    append(*l, 12);  // segments 0, 12, 24 of four batches each
    // A crash after the checkpoint recorded everything as flushed.
  }
  for (const std::int64_t base : {0, 12, 24}) std::filesystem::remove(path(base, index_suffix));
  testing::flip_byte(path(12, log_suffix), batch_size + 70);  // inside batch 15
  const auto sizes =
      std::vector<std::uint64_t>{testing::file_size(path(0, log_suffix)), testing::file_size(path(12, log_suffix)),
                                 testing::file_size(path(24, log_suffix))};
  auto l = open(small_segments(4), true, offset{36});
  EXPECT_EQ(l->log_end_offset(), offset{36});
  EXPECT_EQ(testing::file_size(path(0, log_suffix)), sizes[0]);
  EXPECT_EQ(testing::file_size(path(12, log_suffix)), sizes[1]);  // kept whole, bad bytes and all
  EXPECT_EQ(testing::file_size(path(24, log_suffix)), sizes[2]);
  // Offsets 15..23 are a gap now; reads go around it.
  EXPECT_EQ(bases(*l, 0), (std::vector<std::int64_t>{0, 3, 6, 9, 12}));
  EXPECT_EQ(bases(*l, 15), (std::vector<std::int64_t>{24, 27, 30, 33}));
  append(*l, 1);
  EXPECT_EQ(bases(*l, 36), (std::vector<std::int64_t>{36}));
}

// Past the recovery point data was never flushed, and a torn tail is cut as before, with every later
// (equally unflushed) segment.
TEST_F(durability_test, recovery_past_the_recovery_point_cuts_unflushed_damage) {
  {
    auto l = open(small_segments(4));
    append(*l, 12);
  }
  testing::flip_byte(path(12, log_suffix), batch_size + 70);
  auto l = open(small_segments(4), true, offset{12});
  EXPECT_EQ(l->log_end_offset(), offset{15});
  EXPECT_FALSE(std::filesystem::exists(path(24, log_suffix)));
  EXPECT_EQ(testing::file_size(path(12, log_suffix)), batch_size);
}

// A sealed segment's index that was damaged while the broker ran (or before a clean restart, which trusts
// the files) is checked on first use and rebuilt, so the partition stays readable.
TEST_F(durability_test, a_damaged_sealed_index_is_rebuilt_on_first_use) {
  {
    auto l = open(small_segments(8));
    append(*l, 24);
    ASSERT_TRUE(l->close());
  }
  // The first entry of segment 24's index (of three) now points into the middle of a batch; entries stay in
  // order and inside the log, so opening the segment (which looks only at the last entry) does not notice.
  {
    std::fstream f(path(24, index_suffix), std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(7);
    f.get(c);
    f.seekp(7);
    f.put(static_cast<char>(c + 5));
  }
  auto l = open(small_segments(8));
  EXPECT_EQ(bases(*l, 30), (std::vector<std::int64_t>{30, 33, 36, 39, 42, 45, 48, 51, 54, 57, 60, 63, 66, 69}));
  EXPECT_EQ(bases(*l, 0).size(), 24u);
}

// Sealed segments hold their .log open and nothing else while idle: indexes are opened on use and closed
// after segment::idle_index_close.
TEST_F(durability_test, idle_sealed_segments_hold_one_descriptor) {
  const auto open_descriptors = [] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  {
    auto l = open(small_segments(1));
    append(*l, 40);
    ASSERT_TRUE(l->close());
  }
  const std::size_t before = open_descriptors();
  auto l = open(small_segments(1));
  EXPECT_EQ(l->segment_count(), 40u);
  EXPECT_LE(open_descriptors() - before, 40u);  // 40 .log files, every index closed
  EXPECT_EQ(bases(*l, 0).size(), 40u);          // every sealed index opened once
  EXPECT_GE(open_descriptors() - before, 3u * 39u);
  EXPECT_EQ(l->release_idle_indexes(std::chrono::steady_clock::now() + std::chrono::seconds(1)), 39u);
  EXPECT_LE(open_descriptors() - before, 40u);
  EXPECT_EQ(bases(*l, 0).size(), 40u);  // and reopened on demand
}

// An active segment holds its .log open and nothing else until its next index entry, and again once its
// indexes are idle, so a broker hosting thousands of quiet partitions needs one descriptor for each.
TEST_F(durability_test, idle_active_segments_hold_one_descriptor) {
  const auto open_descriptors = [] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  const std::size_t before = open_descriptors();
  auto l = open(small_segments(100));
  const std::size_t empty = open_descriptors() - before;
  append(*l, 3);  // the third batch is indexed: the files open
  EXPECT_EQ(open_descriptors() - before, empty + 2u);
  EXPECT_EQ(l->release_idle_indexes(std::chrono::steady_clock::now() + std::chrono::seconds(1)), 1u);
  EXPECT_EQ(open_descriptors() - before, empty);
  EXPECT_EQ(bases(*l, 3), (std::vector<std::int64_t>{3, 6}));  // lookups need no file
  EXPECT_EQ(open_descriptors() - before, empty);
  const auto index_bytes = testing::file_size(path(0, index_suffix));
  append(*l, 2);  // the fifth batch is indexed: reopened, its entry written after the first
  EXPECT_EQ(testing::file_size(path(0, index_suffix)), index_bytes + 8);
  ASSERT_TRUE(l->close());
  l = open(small_segments(100));
  EXPECT_EQ(bases(*l, 9), (std::vector<std::int64_t>{9, 12}));
  EXPECT_EQ(bases(*l, 0).size(), 5u);
  l.reset();
  l = open(small_segments(100), true);  // recovered as after a crash: every batch read, the indexes rebuilt
  EXPECT_EQ(open_descriptors() - before, empty);
  EXPECT_EQ(bases(*l, 0).size(), 5u);
}

// A roll does no fsync on the appending thread: the old segment is sealed by background work.
TEST_F(durability_test, rolled_segments_are_sealed_in_the_background) {
  auto faulty = std::make_shared<io::faulty_file_system>(fs_);
  fs_ = faulty;
  manual_background work;
  auto l = open(small_segments(2), false, offset{0}, &work);
  faulty->fail_sync = true;  // an fsync on the append path would fail the append
  append(*l, 5);
  EXPECT_EQ(l->segment_count(), 3u);
  EXPECT_EQ(work.queued(), 2u);
  EXPECT_EQ(l->flushed_offset(), offset{0});
  faulty->fail_sync = false;
  EXPECT_EQ(work.run_soon(), 2u);
  EXPECT_EQ(l->flushed_offset(), offset{12});  // both sealed segments count as flushed
  EXPECT_TRUE(std::filesystem::exists(path(6, snapshot_suffix)));
  ASSERT_TRUE(l->close());
}

// Retention renames segments to "*.deleted" at once and unlinks them file.delete.delay.ms later; a restart
// before that removes them.
TEST_F(durability_test, retention_deletes_files_after_file_delete_delay_ms) {
  manual_background work;
  auto config = small_segments(1);
  config.retention_bytes = static_cast<std::int64_t>(2 * batch_size);
  config.file_delete_delay_ms = 60000;
  auto l = open(config, false, offset{0}, &work);
  append(*l, 5);
  work.run_soon();
  EXPECT_EQ(l->apply_retention().value(), 3u);
  EXPECT_EQ(l->log_start_offset(), offset{9});
  auto deleted = path(0, log_suffix);
  deleted += deleted_suffix;
  EXPECT_FALSE(std::filesystem::exists(path(0, log_suffix)));
  EXPECT_TRUE(std::filesystem::exists(deleted));
  EXPECT_EQ(work.run_delayed(std::chrono::milliseconds(59999)), 0u);
  EXPECT_TRUE(std::filesystem::exists(deleted));
  EXPECT_EQ(work.run_delayed(std::chrono::milliseconds(60000)), 1u);
  EXPECT_FALSE(std::filesystem::exists(deleted));

  append(*l, 2);
  work.run_soon();
  ASSERT_EQ(l->apply_retention().value(), 2u);
  ASSERT_TRUE(l->close());
  l.reset();
  auto reopened = open(config);
  for (const auto& e : std::filesystem::directory_iterator(dir_.path() / "t-0"))
    EXPECT_FALSE(e.path().string().ends_with(deleted_suffix)) << e.path();
}

TEST(offset_checkpoint, round_trips_and_refuses_damage) {
  offset_map offsets{{{"orders", partition_id{0}}, offset{12}}, {{"a-b.c_d", partition_id{17}}, offset{0}}};
  const auto text = encode_offset_checkpoint(offsets);
  EXPECT_EQ(text, "0\n2\na-b.c_d 17 0\norders 0 12\n");
  EXPECT_EQ(decode_offset_checkpoint(text).value(), offsets);
  for (const std::string bad : {"", "1\n0\n", "0\n2\norders 0 12\n", "0\n1\norders x 12\n", "0\n1\norders 0 -4\n",
                                "0\n1\norders 0\n", "0\n-1\n", "0\n0\nextra\n"})
    EXPECT_FALSE(decode_offset_checkpoint(bad)) << bad;
}

// The recovery point and high watermark checkpoints are written per log dir and read back at startup.
TEST(log_manager_checkpoints, survive_a_restart) {
  testing::temp_dir root;
  manual_clock clock;
  const auto open = [&] {
    return log_manager::open({.fs = io::posix_file_system(), .clock = &clock, .log_dirs = {root.path() / "a"}}).value();
  };
  {
    auto manager = open();
    auto l = manager->create({"t", partition_id{0}}, log_config{}).value();
    auto bytes = build_simple_batch(4);
    ASSERT_TRUE(l->append(bytes, leader_epoch{0}));
    ASSERT_TRUE(l->flush(offset{4}));
    ASSERT_TRUE(manager->checkpoint_recovery_points());
    ASSERT_TRUE(manager->write_checkpoint(high_watermark_checkpoint, {{{"t", partition_id{0}}, offset{3}}}));
  }
  auto manager = open();
  EXPECT_EQ(manager->read_checkpoint(high_watermark_checkpoint), (offset_map{{{"t", partition_id{0}}, offset{3}}}));
  EXPECT_EQ(manager->read_checkpoint(recovery_point_checkpoint), (offset_map{{{"t", partition_id{0}}, offset{4}}}));
}

// A sealed segment's flush reaches the recovery-point checkpoint when the seal is done, not at the next
// periodic write: a crash soon after a large produce then recovers only the active segment.
TEST(log_manager_checkpoints, follow_each_sealed_segment) {
  testing::temp_dir root;
  manual_clock clock;
  manual_background work;
  auto manager = log_manager::open(
                     {.fs = io::posix_file_system(), .clock = &clock, .log_dirs = {root.path() / "a"}, .work = &work})
                     .value();
  log_config config;
  config.segment_bytes = static_cast<std::int64_t>(2 * batch_size);
  auto l = manager->create({"t", partition_id{0}}, config).value();
  for (int i = 0; i < 5; ++i) {
    auto bytes = build_simple_batch(3);
    ASSERT_TRUE(l->append(bytes, leader_epoch{0}));
  }
  const topic_partition tp{"t", partition_id{0}};
  const auto before = manager->read_checkpoint(recovery_point_checkpoint);
  EXPECT_TRUE(!before.contains(tp) || before.at(tp) == offset{0});
  EXPECT_EQ(work.run_soon(), 2u);
  EXPECT_EQ(l->flushed_offset(), offset{12});
  EXPECT_EQ(manager->read_checkpoint(recovery_point_checkpoint), (offset_map{{tp, offset{12}}}));
  ASSERT_TRUE(manager->shutdown());
}

// A full disk is a state, not a failure: a write that finds no space marks the dir full (once), free space
// is measured, and the flag clears when space comes back. The log stays usable.
TEST(log_dir_state, full_comes_and_goes_and_offline_stays) {
  auto faulty = std::make_shared<io::faulty_file_system>(io::posix_file_system());
  testing::temp_dir root;
  manual_clock clock;
  auto manager = log_manager::open({.fs = faulty, .clock = &clock, .log_dirs = {root.path() / "a"}}).value();
  const auto& dir = *manager->dirs().front();
  auto l = manager->create({"t", partition_id{0}}, log_config{}).value();
  faulty->write_errno = ENOSPC;
  faulty->fail_writes_after_bytes = 0;
  auto bytes = build_simple_batch(2);
  EXPECT_EQ(l->append(bytes, leader_epoch{0}).error(), std::error_code(ENOSPC, std::system_category()));
  EXPECT_TRUE(dir.full());
  EXPECT_FALSE(dir.offline());
  faulty->fail_writes_after_bytes = -1;
  faulty->free_bytes_override = 10;
  manager->refresh_free_space();
  EXPECT_TRUE(dir.full());
  EXPECT_EQ(dir.free_bytes(), 10u);
  faulty->free_bytes_override = 1 << 30;
  manager->refresh_free_space();
  EXPECT_FALSE(dir.full());
  bytes = build_simple_batch(2);
  EXPECT_TRUE(l->append(bytes, leader_epoch{0}));

  faulty->fail_sync = true;
  EXPECT_FALSE(l->flush(offset{2}));
  EXPECT_TRUE(dir.offline());
  EXPECT_NE(dir.offline_reason().find("fsync"), std::string::npos);
  // New logs go nowhere, and the dir gets no clean-shutdown marker: the next start recovers it.
  EXPECT_EQ(manager->create({"t", partition_id{1}}, log_config{}).error(), errc::log_dir_offline);
  EXPECT_FALSE(manager->shutdown());
  EXPECT_FALSE(std::filesystem::exists(root.path() / "a" / log_manager::clean_shutdown_marker));
}

// The file system's size is measured with its free space, so a dashboard or alert can show free space as a
// share of it; it is unknown (UINT64_MAX) until the first measurement.
TEST(log_dir_state, total_bytes_are_measured_with_free_bytes) {
  auto faulty = std::make_shared<io::faulty_file_system>(io::posix_file_system());
  testing::temp_dir root;
  manual_clock clock;
  auto manager = log_manager::open({.fs = faulty, .clock = &clock, .log_dirs = {root.path() / "a"}}).value();
  const auto& dir = *manager->dirs().front();
  faulty->free_bytes_override = 1 << 20;
  faulty->total_bytes_override = 1 << 30;
  manager->refresh_free_space();
  EXPECT_EQ(dir.free_bytes(), 1u << 20);
  EXPECT_EQ(dir.total_bytes(), 1u << 30);
  faulty->total_bytes_override = -1;
  manager->refresh_free_space();
  EXPECT_GT(dir.total_bytes(), 0u);
  EXPECT_NE(dir.total_bytes(), UINT64_MAX);
  ASSERT_TRUE(manager->shutdown());
}

}  // namespace
}  // namespace ferry::storage
