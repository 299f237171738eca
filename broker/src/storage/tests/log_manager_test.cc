#include "storage/log_manager.h"

#include <gtest/gtest.h>

#include <thread>

#include "model/testing/batch_builder.h"
#include "storage/file_names.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::build_simple_batch;

topic_partition tp(const std::string& topic, std::int32_t partition) { return {topic, partition_id{partition}}; }

class log_manager_test : public ::testing::Test {
 protected:
  std::unique_ptr<log_manager> open(std::size_t dirs = 2) {
    log_manager::options options{.fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {}, .topic_config = {}};
    for (std::size_t i = 0; i < dirs; ++i) options.log_dirs.push_back(dir(i));
    auto opened = log_manager::open(std::move(options));
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  std::filesystem::path dir(std::size_t i) const { return root_.path() / ("dir" + std::to_string(i)); }
  static void append(log& l, int batches = 1) {
    for (int i = 0; i < batches; ++i) {
      auto bytes = build_simple_batch(2);
      ASSERT_TRUE(l.append(bytes, leader_epoch{1}));
    }
  }

  testing::temp_dir root_;
  manual_clock clock_;
};

TEST_F(log_manager_test, creates_logs_in_the_emptiest_dir_and_finds_them_again) {
  {
    auto manager = open();
    for (int p = 0; p < 4; ++p) {
      auto created = manager->create(tp("my-topic", p), log_config{});
      ASSERT_TRUE(created);
      append(*created.value(), p + 1);
    }
    EXPECT_TRUE(std::filesystem::exists(dir(0) / "my-topic-0"));
    EXPECT_TRUE(std::filesystem::exists(dir(1) / "my-topic-1"));
    EXPECT_TRUE(std::filesystem::exists(dir(0) / "my-topic-2"));
    EXPECT_TRUE(std::filesystem::exists(dir(1) / "my-topic-3"));
    // Creating an existing log returns it.
    EXPECT_EQ(manager->create(tp("my-topic", 2), log_config{}).value(), manager->get(tp("my-topic", 2)));
    EXPECT_FALSE(manager->get(tp("my-topic", 4)));
    ASSERT_TRUE(manager->shutdown());
    EXPECT_TRUE(std::filesystem::exists(dir(0) / log_manager::clean_shutdown_marker));
    EXPECT_TRUE(std::filesystem::exists(dir(1) / log_manager::clean_shutdown_marker));
  }
  auto manager = open();
  EXPECT_FALSE(std::filesystem::exists(dir(0) / log_manager::clean_shutdown_marker));
  EXPECT_EQ(manager->partitions(),
            (std::vector<topic_partition>{tp("my-topic", 0), tp("my-topic", 1), tp("my-topic", 2), tp("my-topic", 3)}));
  for (int p = 0; p < 4; ++p) EXPECT_EQ(manager->get(tp("my-topic", p))->log_end_offset(), offset{2 * (p + 1)});
}

TEST_F(log_manager_test, a_dir_without_the_marker_is_recovered) {
  auto write_and_damage = [&](bool clean) {
    {
      auto manager = open(1);
      auto l = manager->create(tp("t", 0), log_config{}).value();
      append(*l, 3);
      if (clean) {
        ASSERT_TRUE(manager->shutdown());
      }
    }
    const auto segment = dir(0) / "t-0" / offset_file_name(offset{0}, log_suffix);
    testing::flip_byte(segment, testing::file_size(segment) - 2);  // inside the last batch
  };
  write_and_damage(true);
  EXPECT_EQ(open(1)->get(tp("t", 0))->log_end_offset(), offset{6});  // trusted after a clean shutdown
  // The open above deleted the marker and the process "crashed": now the damage is found. The batch was
  // flushed (the shutdown's recovery-point checkpoint says 6), so nothing is cut: the segment reads up to
  // the bad batch, its bytes stay, and new appends start past every offset ever handed out.
  const auto segment = dir(0) / "t-0" / offset_file_name(offset{0}, log_suffix);
  const auto size = testing::file_size(segment);
  auto manager = open(1);
  auto l = manager->get(tp("t", 0));
  EXPECT_EQ(l->log_end_offset(), offset{6});
  EXPECT_EQ(testing::file_size(segment), size);
  EXPECT_TRUE(std::filesystem::exists(dir(0) / "t-0" / offset_file_name(offset{6}, log_suffix)));
  EXPECT_EQ(testing::base_offsets(l->read(offset{0}, UINT64_MAX, offset{6}).value()),
            (std::vector<std::int64_t>{0, 2}));
  append(*l, 1);
  EXPECT_EQ(testing::base_offsets(l->read(offset{4}, UINT64_MAX, offset{8}).value()), (std::vector<std::int64_t>{6}));
}

// Without a checkpoint (a crash before the first one) the recovery point is 0 and recovery cuts at the damage.
TEST_F(log_manager_test, without_a_recovery_point_damage_is_cut) {
  {
    auto manager = open(1);
    append(*manager->create(tp("t", 0), log_config{}).value(), 3);
  }
  const auto segment = dir(0) / "t-0" / offset_file_name(offset{0}, log_suffix);
  testing::flip_byte(segment, testing::file_size(segment) - 2);
  EXPECT_EQ(open(1)->get(tp("t", 0))->log_end_offset(), offset{4});
}

TEST_F(log_manager_test, remove_deletes_the_directory_but_not_a_held_log) {
  auto manager = open(1);
  auto l = manager->create(tp("gone", 3), log_config{}).value();
  append(*l, 2);
  const auto held = l->read(offset{0}, UINT64_MAX, offset{4}).value();
  ASSERT_TRUE(manager->remove(tp("gone", 3)));
  EXPECT_FALSE(manager->get(tp("gone", 3)));
  EXPECT_TRUE(manager->partitions().empty());
  EXPECT_TRUE(testing::holds_only_its_lock(dir(0)));
  EXPECT_EQ(testing::base_offsets(held), (std::vector<std::int64_t>{0, 2}));
  auto bytes = build_simple_batch(1);
  EXPECT_EQ(l->append(bytes, leader_epoch{1}).error(), errc::log_closed);
  EXPECT_TRUE(manager->remove(tp("gone", 3)));  // already gone: nothing to do
  // A new log of the same name starts empty.
  EXPECT_EQ(manager->create(tp("gone", 3), log_config{}).value()->log_end_offset(), offset{0});
}

TEST_F(log_manager_test, remove_works_for_the_longest_topic_names) {
  auto manager = open(1);
  const std::string topic(249, 't');  // Kafka's limit; "<topic>-<partition>" fits a file name
  auto l = manager->create(tp(topic, 12345), log_config{}).value();
  append(*l, 1);
  ASSERT_TRUE(manager->remove(tp(topic, 12345)));
  EXPECT_FALSE(manager->get(tp(topic, 12345)));
  EXPECT_TRUE(testing::holds_only_its_lock(dir(0)));
  EXPECT_EQ(manager->create(tp(topic, 12345), log_config{}).value()->log_end_offset(), offset{0});
}

TEST_F(log_manager_test, startup_skips_strangers_and_removes_half_deleted_logs) {
  std::filesystem::create_directories(dir(0) / "t-1.0123456789abcdef0123456789abcdef-delete");
  std::filesystem::create_directories(dir(0) / "lost+found");
  std::filesystem::create_directories(dir(0) / "no-number-x");
  auto manager = open(1);
  EXPECT_FALSE(std::filesystem::exists(dir(0) / "t-1.0123456789abcdef0123456789abcdef-delete"));
  EXPECT_TRUE(std::filesystem::exists(dir(0) / "lost+found"));
  EXPECT_TRUE(manager->partitions().empty());
}

TEST_F(log_manager_test, the_same_partition_in_two_dirs_is_refused) {
  std::filesystem::create_directories(dir(0) / "t-0");
  std::filesystem::create_directories(dir(1) / "t-0");
  log_manager::options options{
      .fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {dir(0), dir(1)}, .topic_config = {}};
  EXPECT_FALSE(log_manager::open(std::move(options)));
}

TEST_F(log_manager_test, logs_found_at_startup_take_their_topic_config) {
  {
    auto manager = open(1);
    append(*manager->create(tp("small", 0), log_config{}).value(), 1);
    ASSERT_TRUE(manager->shutdown());
  }
  log_manager::options options{.fs = io::posix_file_system(),
                               .clock = &clock_,
                               .log_dirs = {dir(0)},
                               .topic_config = [](const std::string& topic) {
                                 log_config config;
                                 if (topic == "small") config.segment_bytes = 1;
                                 return config;
                               }};
  auto manager = log_manager::open(std::move(options)).value();
  auto l = manager->get(tp("small", 0));
  append(*l, 2);
  EXPECT_EQ(l->segment_count(), 3u);
}

TEST_F(log_manager_test, retention_and_flushing_run_over_every_log) {
  auto manager = open();
  log_config config;
  config.segment_bytes = 1;  // a segment per batch
  config.retention_bytes = 0;
  for (int p = 0; p < 3; ++p) append(*manager->create(tp("r", p), config).value(), 4);
  EXPECT_EQ(manager->apply_retention_all().value(), 9u);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(manager->get(tp("r", p))->log_start_offset(), offset{6});
  EXPECT_TRUE(manager->flush_all_by_time());
}

TEST_F(log_manager_test, threads_may_create_get_and_remove_at_once) {
  auto manager = open();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const auto partition = tp("c", i % 5);
        auto created = manager->create(partition, log_config{});
        EXPECT_TRUE(created);
        if (auto l = manager->get(partition)) (void)l->log_end_offset();
        if ((i + t) % 7 == 0) {
          EXPECT_TRUE(manager->remove(partition));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_TRUE(manager->shutdown());
  const auto before = manager->partitions();
  manager.reset();
  auto reopened = open();
  EXPECT_EQ(reopened->partitions(), before);
}

// Two brokers on one log dir would write over each other's segments: the second is refused.
TEST_F(log_manager_test, a_log_dir_is_never_opened_twice) {
  auto first = open(1);
  log_manager::options options{
      .fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {dir(0)}, .topic_config = {}};
  const auto second = log_manager::open(std::move(options));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), errc::log_dir_in_use);
  first.reset();
  EXPECT_TRUE(open(1));
}

}  // namespace
}  // namespace ferry::storage
