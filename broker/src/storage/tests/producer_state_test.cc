#include "storage/producer_state.h"

#include <gtest/gtest.h>

#include "model/testing/batch_builder.h"
#include "storage/errc.h"

namespace ferry::storage {
namespace {

// A batch of `records` records from producer 7 starting at `sequence`, placed at offset `base`.
std::vector<std::byte> batch(std::int16_t epoch, std::int32_t sequence, int records = 2, std::int64_t base = 0,
                             std::int64_t producer = 7) {
  model::testing::batch_spec spec;
  for (int i = 0; i < records; ++i) spec.records.push_back({"k", "v", {}, i});
  spec.producer = producer_id{producer};
  spec.epoch = producer_epoch{epoch};
  spec.base_sequence = sequence;
  auto bytes = model::testing::build_batch(spec);
  model::set_base_offset(bytes, offset{base});
  return bytes;
}

class producer_state_test : public ::testing::Test {
 protected:
  // Checks a batch and records it when it may be appended; returns the check's verdict.
  result<std::optional<producer_batch>> offer(const std::vector<std::byte>& bytes) {
    const model::batch_header_view header(bytes);
    auto verdict = state_.check(header);
    if (verdict && !verdict.value()) state_.update(header);
    return verdict;
  }

  producer_state_manager state_;
};

TEST_F(producer_state_test, an_unknown_producer_starts_at_any_sequence) {
  EXPECT_TRUE(offer(batch(0, 42)));
  EXPECT_TRUE(offer(batch(0, 44, 1, 2)));
  const auto entry = state_.find(producer_id{7});
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->epoch, producer_epoch{0});
  ASSERT_EQ(entry->batches.size(), 2u);
  EXPECT_EQ(entry->batches[1], (producer_batch{44, 44, offset{2}, offset{2}, 1'700'000'000'000}));
  EXPECT_FALSE(state_.find(producer_id{8}));
}

TEST_F(producer_state_test, a_gap_or_a_stale_sequence_is_out_of_order) {
  ASSERT_TRUE(offer(batch(0, 0)));  // sequences 0-1
  EXPECT_EQ(offer(batch(0, 3)).error(), errc::out_of_order_sequence);
  EXPECT_EQ(offer(batch(0, 1)).error(), errc::out_of_order_sequence);  // overlaps, not a retained batch
  EXPECT_TRUE(offer(batch(0, 2)));
}

TEST_F(producer_state_test, a_retry_of_one_of_the_last_five_batches_is_a_duplicate) {
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(offer(batch(0, 2 * i, 2, 10 * i)));
  // The first batch (sequence 0) is no longer retained.
  EXPECT_EQ(offer(batch(0, 0)).error(), errc::out_of_order_sequence);
  for (int i = 1; i < 6; ++i) {
    const auto verdict = offer(batch(0, 2 * i));
    ASSERT_TRUE(verdict);
    ASSERT_TRUE(verdict.value()) << i;
    EXPECT_EQ(verdict.value()->first_offset, offset{10 * i});
    EXPECT_EQ(verdict.value()->last_offset, offset{10 * i + 1});
  }
  // Same first sequence, different length: not the retained batch.
  EXPECT_EQ(offer(batch(0, 10, 3)).error(), errc::out_of_order_sequence);
  EXPECT_EQ(state_.find(producer_id{7})->batches.size(), producer_entry::retained_batches);
}

TEST_F(producer_state_test, epochs_fence_and_restart_sequences) {
  ASSERT_TRUE(offer(batch(3, 0)));
  EXPECT_EQ(offer(batch(2, 2)).error(), errc::invalid_producer_epoch);
  EXPECT_EQ(offer(batch(4, 5)).error(), errc::out_of_order_sequence);
  // A retry across an epoch bump is not a duplicate of the old epoch's batch.
  EXPECT_TRUE(offer(batch(4, 0)));
  const auto entry = state_.find(producer_id{7});
  EXPECT_EQ(entry->epoch, producer_epoch{4});
  EXPECT_EQ(entry->batches.size(), 1u);
  EXPECT_EQ(offer(batch(3, 2)).error(), errc::invalid_producer_epoch);
}

TEST_F(producer_state_test, sequences_wrap_after_int32_max) {
  ASSERT_TRUE(offer(batch(0, INT32_MAX - 1)));  // INT32_MAX - 1 and INT32_MAX
  EXPECT_EQ(offer(batch(0, 1)).error(), errc::out_of_order_sequence);
  EXPECT_TRUE(offer(batch(0, 0)));
}

TEST_F(producer_state_test, snapshots_round_trip_and_detect_damage) {
  ASSERT_TRUE(offer(batch(1, 0, 2, 0, 7)));
  ASSERT_TRUE(offer(batch(1, 2, 3, 2, 7)));
  ASSERT_TRUE(offer(batch(0, 9, 1, 5, 8)));
  const auto bytes = state_.serialize();
  const auto loaded = producer_state_manager::deserialize(bytes);
  ASSERT_TRUE(loaded);
  for (const auto id : {7, 8}) EXPECT_EQ(loaded.value().find(producer_id{id}), state_.find(producer_id{id}));
  EXPECT_FALSE(loaded.value().find(producer_id{9}));

  for (std::size_t i = 0; i < bytes.size(); i += 7) {
    auto damaged = bytes;
    damaged[i] ^= std::byte{0x10};
    EXPECT_EQ(producer_state_manager::deserialize(damaged).error(), errc::corrupt_log) << i;
  }
  EXPECT_EQ(producer_state_manager::deserialize(std::span(bytes).first(bytes.size() - 1)).error(), errc::corrupt_log);
  EXPECT_EQ(producer_state_manager::deserialize(std::span(bytes).first(3)).error(), errc::corrupt_log);
  EXPECT_TRUE(producer_state_manager::deserialize(producer_state_manager{}.serialize()));
}

TEST_F(producer_state_test, producers_below_the_log_start_are_forgotten) {
  ASSERT_TRUE(offer(batch(0, 0, 2, 0, 7)));   // offsets 0-1
  ASSERT_TRUE(offer(batch(0, 0, 2, 10, 8)));  // offsets 10-11
  state_.remove_before(offset{2});
  EXPECT_FALSE(state_.find(producer_id{7}));
  EXPECT_TRUE(state_.find(producer_id{8}));
  // Forgotten means unknown: any sequence is accepted again.
  EXPECT_TRUE(offer(batch(0, 77, 1, 20, 7)));
}

}  // namespace
}  // namespace ferry::storage
