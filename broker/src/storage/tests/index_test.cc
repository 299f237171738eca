#include "storage/index.h"

#include <gtest/gtest.h>

#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

class index_test : public ::testing::TestWithParam<bool> {
 protected:
  std::shared_ptr<io::file> open(const std::string& name) {
    return fs_->open(dir_.path() / name, io::open_mode::create_read_write).value();
  }

  testing::temp_dir dir_;
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

// Entries at relative offsets 10, 20, ... 100 and positions 1000, 2000, ... 10000 of a segment at 500.
offset_index filled_offset_index(std::shared_ptr<io::file> file) {
  offset_index index(file, offset{500}, 1 << 20, true);
  EXPECT_TRUE(index.load(0));
  for (int i = 1; i <= 10; ++i) EXPECT_TRUE(index.append(offset{500 + 10 * i}, 1000u * i));
  return index;
}

TEST_P(index_test, offset_lookup_finds_the_last_entry_at_or_before_the_target) {
  const bool resident = GetParam();
  auto file = open("a.index");
  filled_offset_index(file);
  offset_index index(file, offset{500}, 1 << 20, resident);
  ASSERT_TRUE(index.load(20000));
  EXPECT_EQ(index.size(), 10u);

  using entry = std::pair<std::int64_t, std::uint64_t>;
  auto lookup = [&](std::int64_t target) {
    const auto e = index.lookup(offset{target}).value();
    return entry(e.base.value(), e.position);
  };
  EXPECT_EQ(lookup(500), entry(500, 0));  // before the first entry
  EXPECT_EQ(lookup(509), entry(500, 0));
  EXPECT_EQ(lookup(510), entry(510, 1000));  // exact
  EXPECT_EQ(lookup(519), entry(510, 1000));  // between
  EXPECT_EQ(lookup(550), entry(550, 5000));
  EXPECT_EQ(lookup(555), entry(550, 5000));
  EXPECT_EQ(lookup(600), entry(600, 10000));  // last
  EXPECT_EQ(lookup(100000), entry(600, 10000));
  for (int target = 500; target < 620; ++target) {
    const std::int64_t expected = target < 510 ? 500 : std::min(600, target / 10 * 10);
    EXPECT_EQ(lookup(target).first, expected) << target;
  }

  EXPECT_EQ(index.lookup_position(999).value().position, 0u);
  EXPECT_EQ(index.lookup_position(1000).value().base, offset{510});
  EXPECT_EQ(index.lookup_position(4500).value().base, offset{540});
  EXPECT_EQ(index.lookup_position(1u << 30).value().base, offset{600});
  EXPECT_EQ(index.last().value().base, offset{600});
}

TEST_P(index_test, offset_index_truncates_and_appends_again) {
  auto file = open("b.index");
  offset_index index = filled_offset_index(file);
  ASSERT_TRUE(index.truncate(3));
  EXPECT_EQ(testing::file_size(dir_.path() / "b.index"), 24u);
  EXPECT_EQ(index.lookup(offset{580}).value().base, offset{530});
  ASSERT_TRUE(index.append(offset{540}, 4444));
  offset_index reloaded(file, offset{500}, 1 << 20, GetParam());
  ASSERT_TRUE(reloaded.load(5000));
  EXPECT_EQ(reloaded.lookup(offset{599}).value().position, 4444u);
}

TEST_P(index_test, offset_index_load_refuses_impossible_contents) {
  const bool resident = GetParam();
  auto file = open("c.index");
  filled_offset_index(file);
  // The last entry's position is past the end of a 5000-byte log.
  EXPECT_EQ(offset_index(file, offset{500}, 1 << 20, resident).load(5000).error(), errc::corrupt_log);
  // A torn entry.
  testing::append_bytes(dir_.path() / "c.index", "abc");
  EXPECT_EQ(offset_index(file, offset{500}, 1 << 20, resident).load(20000).error(), errc::corrupt_log);
}

TEST(offset_index, resident_load_checks_every_entry) {
  testing::temp_dir dir;
  auto file = io::posix_file_system()->open(dir.path() / "d.index", io::open_mode::create_read_write).value();
  {
    offset_index index(file, offset{0}, 1 << 20, true);
    ASSERT_TRUE(index.load(0));
    ASSERT_TRUE(index.append(offset{10}, 100));
    ASSERT_TRUE(index.append(offset{5}, 200));  // offsets go back
    ASSERT_TRUE(index.append(offset{20}, 300));
  }
  EXPECT_EQ(offset_index(file, offset{0}, 1 << 20, true).load(1000).error(), errc::corrupt_log);
  // A sealed index is only checked at its end, like Kafka's.
  EXPECT_TRUE(offset_index(file, offset{0}, 1 << 20, false).load(1000));
}

TEST_P(index_test, full_at_segment_index_bytes) {
  auto file = open("e.index");
  offset_index index(file, offset{0}, 16, GetParam());
  ASSERT_TRUE(index.load(0));
  EXPECT_FALSE(index.full());
  ASSERT_TRUE(index.append(offset{1}, 10));
  EXPECT_FALSE(index.full());
  ASSERT_TRUE(index.append(offset{2}, 20));
  EXPECT_TRUE(index.full());
}

TEST_P(index_test, time_lookup_finds_the_last_entry_older_than_the_target) {
  auto file = open("a.timeindex");
  {
    time_index index(file, offset{100}, 1 << 20, true);
    ASSERT_TRUE(index.load(offset{100}));
    for (int i = 1; i <= 5; ++i) ASSERT_TRUE(index.append({1000 * i, offset{100 + 10 * i}}));
  }
  time_index index(file, offset{100}, 1 << 20, GetParam());
  ASSERT_TRUE(index.load(offset{200}));
  EXPECT_FALSE(index.last_before(1000).value());  // no entry is older than 1000
  EXPECT_EQ(index.last_before(1001).value()->base, offset{110});
  EXPECT_EQ(index.last_before(3000).value()->base, offset{120});
  EXPECT_EQ(index.last_before(3001).value()->base, offset{130});
  EXPECT_EQ(index.last_before(INT64_MAX).value()->timestamp, 5000);
  EXPECT_EQ(index.last().value()->base, offset{150});
  // An entry naming an offset past the segment's end is impossible.
  EXPECT_EQ(time_index(file, offset{100}, 1 << 20, GetParam()).load(offset{150}).error(), errc::corrupt_log);
}

INSTANTIATE_TEST_SUITE_P(resident_and_sealed, index_test, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "resident" : "sealed"; });

}  // namespace
}  // namespace ferry::storage
