// read() reports which offsets its batches span, which the fetch path counts as records sent.
#include <gtest/gtest.h>

#include "model/testing/batch_builder.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

TEST(read_span, first_and_next_offsets_cover_the_batches_returned) {
  testing::temp_dir dir;
  manual_clock clock;
  log_config config;
  config.segment_bytes = 400;  // a few batches per segment
  auto log =
      open_log({.fs = io::posix_file_system(), .clock = &clock, .directory = dir.path(), .config = config}).value();
  for (int i = 0; i < 10; ++i) {
    auto batch = model::testing::build_simple_batch(5);
    ASSERT_TRUE(log->append(batch, leader_epoch{0}));
  }
  ASSERT_GT(log->segment_count(), 1u);

  const auto everything = log->read(offset{0}, 1 << 20, log->log_end_offset()).value();
  EXPECT_EQ(everything.first_offset, offset{0});
  EXPECT_EQ(everything.next_offset, offset{50});

  // From the middle of a batch: the whole batch comes back, so the span starts at its base offset.
  const auto middle = log->read(offset{12}, 1 << 20, offset{30}).value();
  EXPECT_EQ(middle.first_offset, offset{10});
  EXPECT_EQ(middle.next_offset, offset{30});

  // A byte limit cuts at a batch boundary; the span ends where the first batch left out begins.
  const auto one = log->read(offset{0}, 1, log->log_end_offset()).value();
  EXPECT_EQ(one.first_offset, offset{0});
  EXPECT_EQ(one.next_offset, offset{5});

  const auto none = log->read(log->log_end_offset(), 1 << 20, log->log_end_offset()).value();
  EXPECT_TRUE(none.slices.empty());
  EXPECT_EQ(none.next_offset.value() - none.first_offset.value(), 0);
}

}  // namespace
}  // namespace ferry::storage
