#include "storage/segment.h"

#include <gtest/gtest.h>

#include "model/testing/batch_builder.h"
#include "storage/errc.h"
#include "storage/file_names.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

constexpr std::int32_t index_bytes = 1 << 20;

class segment_test : public ::testing::Test {
 protected:
  // Appends batches of 2 records at base 100, 102, ... with max timestamps 1001, 2001, ...; returns
  // their sizes.
  std::vector<std::uint64_t> fill(segment& s, int batches, std::int32_t interval) {
    std::vector<std::uint64_t> sizes;
    for (int i = 0; i < batches; ++i) {
      auto bytes = model::testing::build_simple_batch(2, offset{100 + 2 * i}, 1000 * (i + 1));
      EXPECT_TRUE(s.append(bytes, interval, 0));
      sizes.push_back(bytes.size());
    }
    return sizes;
  }
  std::filesystem::path file(std::string_view suffix) const {
    return dir_.path() / offset_file_name(offset{100}, suffix);
  }

  testing::temp_dir dir_;
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

TEST_F(segment_test, indexes_a_batch_once_more_than_the_interval_was_appended) {
  auto s = segment::create(*fs_, dir_.path(), offset{100}, index_bytes).value();
  const auto sizes = fill(*s, 10, static_cast<std::int32_t>(0));
  // Interval 0: every batch but the first (implied at position 0) gets an entry.
  EXPECT_EQ(testing::file_size(file(index_suffix)), 9u * 8);
  EXPECT_EQ(testing::file_size(file(time_index_suffix)), 9u * 12);
  const auto at = s->committed();
  EXPECT_EQ(at.next_offset, offset{120});
  EXPECT_EQ(at.max_timestamp, 10001);
  EXPECT_EQ(at.offset_of_max_timestamp, offset{118});

  auto t = segment::create(*fs_, dir_.path(), offset{200}, index_bytes).value();
  std::vector<std::uint64_t> t_sizes;
  for (int i = 0; i < 10; ++i) {
    auto bytes = model::testing::build_simple_batch(2, offset{200 + 2 * i});
    ASSERT_TRUE(t->append(bytes, static_cast<std::int32_t>(2 * sizes[0]), 0));
  }
  // An entry for every third batch: after two batches the interval is reached, after three exceeded.
  EXPECT_EQ(testing::file_size(dir_.path() / offset_file_name(offset{200}, index_suffix)), 3u * 8);
}

TEST_F(segment_test, locate_finds_the_batch_holding_each_offset) {
  auto s = segment::create(*fs_, dir_.path(), offset{100}, index_bytes).value();
  const auto sizes = fill(*s, 20, 300);
  const auto at = s->committed();
  std::uint64_t position = 0;
  for (int i = 0; i < 20; ++i) {
    for (int delta = 0; delta < 2; ++delta) {
      const auto found = s->locate(offset{100 + 2 * i + delta}, at).value();
      EXPECT_EQ(found.position, position);
      EXPECT_EQ(found.base, offset{100 + 2 * i});
      EXPECT_EQ(found.size, sizes[i]);
    }
    // The boundary walk stops at whole batches.
    EXPECT_EQ(s->boundary_before(0, position + sizes[i] - 1, at).value().position, position);
    EXPECT_EQ(s->boundary_before(0, position + sizes[i], at).value().position, position + sizes[i]);
    position += sizes[i];
  }
  EXPECT_EQ(position, at.size);
}

TEST_F(segment_test, find_timestamp_returns_the_first_batch_reaching_it) {
  auto s = segment::create(*fs_, dir_.path(), offset{100}, index_bytes).value();
  fill(*s, 20, 200);
  const auto at = s->committed();
  EXPECT_EQ(s->find_timestamp(0, at).value()->base, offset{100});
  EXPECT_EQ(s->find_timestamp(1001, at).value()->base, offset{100});
  EXPECT_EQ(s->find_timestamp(1002, at).value()->base, offset{102});
  EXPECT_EQ(s->find_timestamp(15000, at).value()->base, offset{128});
  EXPECT_EQ(s->find_timestamp(15000, at).value()->max_timestamp, 15001);
  EXPECT_EQ(s->find_timestamp(15001, at).value()->base, offset{128});
  EXPECT_EQ(s->find_timestamp(20001, at).value()->base, offset{138});
  EXPECT_FALSE(s->find_timestamp(20002, at).value());
}

TEST_F(segment_test, a_sealed_segment_reopens_with_the_same_answers) {
  auto s = segment::create(*fs_, dir_.path(), offset{100}, index_bytes).value();
  fill(*s, 30, 150);
  ASSERT_TRUE(s->seal());
  const auto before = s->committed();
  for (const bool active : {false, true}) {
    auto reopened = segment::open(*fs_, dir_.path(), offset{100}, index_bytes, active).value();
    EXPECT_FALSE(reopened->index_suspect());
    const auto at = reopened->committed();
    EXPECT_EQ(at.size, before.size);
    EXPECT_EQ(at.next_offset, before.next_offset);
    EXPECT_EQ(at.max_timestamp, before.max_timestamp);
    for (int o = 100; o < 160; o += 7)
      EXPECT_EQ(reopened->locate(offset{o}, at).value().position, s->locate(offset{o}, before).value().position);
    EXPECT_EQ(reopened->find_timestamp(17500, at).value()->base, offset{134});  // max timestamp 18001
  }
}

TEST_F(segment_test, a_wrong_index_entry_is_caught_not_followed) {
  auto s = segment::create(*fs_, dir_.path(), offset{100}, index_bytes).value();
  fill(*s, 10, 0);
  ASSERT_TRUE(s->seal());
  // Point the last entry one byte off: it no longer starts a batch with the offset it names.
  {
    auto index = fs_->open(file(index_suffix), io::open_mode::read_write).value();
    const std::uint64_t last = index->size().value() - 4;
    std::byte position[4];
    ASSERT_EQ(index->read_at(position, last).value(), 4u);
    position[3] = std::byte{static_cast<unsigned char>(std::to_integer<unsigned char>(position[3]) + 1)};
    ASSERT_TRUE(index->write_at(position, last));
  }
  auto reopened = segment::open(*fs_, dir_.path(), offset{100}, index_bytes, false).value();
  EXPECT_TRUE(reopened->index_suspect());
  EXPECT_EQ(reopened->recover(0).value(), 0u);  // rebuilds the index; the data was fine
  EXPECT_EQ(reopened->locate(offset{119}, reopened->committed()).value().base, offset{118});
}

TEST_F(segment_test, recovery_cuts_at_the_first_bad_batch) {
  auto s = segment::create(*fs_, dir_.path(), offset{100}, index_bytes).value();
  const auto sizes = fill(*s, 5, 0);
  ASSERT_TRUE(s->seal());
  const std::uint64_t third = sizes[0] + sizes[1];
  testing::flip_byte(file(log_suffix), third + sizes[2] - 1);  // in the third batch's last record
  auto reopened = segment::open(*fs_, dir_.path(), offset{100}, index_bytes, true).value();
  EXPECT_EQ(reopened->recover(0).value(), sizes[2] + sizes[3] + sizes[4]);
  const auto at = reopened->committed();
  EXPECT_EQ(at.size, third);
  EXPECT_EQ(at.next_offset, offset{104});
  EXPECT_EQ(at.max_timestamp, 2001);
  EXPECT_EQ(testing::file_size(file(log_suffix)), third);
  EXPECT_EQ(testing::file_size(file(index_suffix)), 8u);
}

}  // namespace
}  // namespace ferry::storage
