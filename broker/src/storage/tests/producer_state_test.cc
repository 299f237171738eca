#include "storage/producer_state.h"

#include <gtest/gtest.h>

#include "bytes/big_endian.h"
#include "bytes/crc32c.h"
#include "model/control_record.h"
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

// A transactional batch of producer 7 (two records) at `base`.
std::vector<std::byte> txn_batch(std::int16_t epoch, std::int32_t sequence, std::int64_t base) {
  model::testing::batch_spec spec;
  spec.records = {{"k", "v", {}, 0}, {"k", "w", {}, 1}};
  spec.producer = producer_id{7};
  spec.epoch = producer_epoch{epoch};
  spec.base_sequence = sequence;
  spec.transactional = true;
  auto bytes = model::testing::build_batch(spec);
  model::set_base_offset(bytes, offset{base});
  return bytes;
}

// A marker of producer 7 at `base`.
std::vector<std::byte> marker_batch(std::int16_t epoch, model::marker_type type, std::int32_t coordinator_epoch,
                                    std::int64_t base) {
  auto bytes = model::build_marker_batch(producer_id{7}, producer_epoch{epoch}, {type, coordinator_epoch}, 0);
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

  // Checks a marker and records it when it may be appended; returns the transaction it ended.
  result<std::optional<completed_txn>> end(const std::vector<std::byte>& bytes) {
    const model::batch_header_view header(bytes);
    const auto marker = model::read_marker(bytes).value();
    FERRY_TRY(state_.check_marker(header.producer(), header.epoch(), marker.coordinator_epoch));
    return state_.complete(header, marker);
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

TEST_F(producer_state_test, a_transactional_batch_opens_a_transaction_that_holds_the_stable_offset) {
  ASSERT_TRUE(offer(batch(0, 0, 2, 0, 8)));  // another producer's plain batch at 0-1
  EXPECT_EQ(state_.first_unstable_offset(offset{2}), std::nullopt);
  ASSERT_TRUE(offer(txn_batch(0, 0, 2)));  // offsets 2-3
  ASSERT_TRUE(offer(txn_batch(0, 2, 4)));  // offsets 4-5, the same transaction
  EXPECT_EQ(state_.find(producer_id{7})->ongoing_txn, offset{2});
  EXPECT_EQ(state_.first_unstable_offset(offset{6}), offset{2});
  EXPECT_EQ(state_.first_open_txn(), offset{2});
  // Inside its transaction the producer cannot write outside it.
  EXPECT_EQ(offer(batch(0, 4, 1, 6)).error(), errc::invalid_txn_state);
}

TEST_F(producer_state_test, a_marker_ends_the_transaction_once_the_high_watermark_passes_it) {
  ASSERT_TRUE(offer(txn_batch(0, 0, 10)));
  const auto ended = end(marker_batch(0, model::marker_type::commit, 3, 12));
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended.value(), (completed_txn{producer_id{7}, offset{10}, offset{12}, false}));
  EXPECT_FALSE(state_.find(producer_id{7})->ongoing_txn);
  EXPECT_EQ(state_.find(producer_id{7})->coordinator_epoch, 3);
  EXPECT_EQ(state_.first_open_txn(), std::nullopt);
  // Until the high watermark passes the marker, the transaction is still unstable (Kafka's unreplicated ones).
  EXPECT_EQ(state_.first_unstable_offset(offset{12}), offset{10});
  EXPECT_EQ(state_.first_unstable_offset(offset{13}), std::nullopt);
  EXPECT_EQ(state_.first_unstable_offset(offset{12}), std::nullopt);  // forgotten once passed

  // A marker with no transaction open ends nothing; an abort reports itself as one.
  EXPECT_EQ(end(marker_batch(0, model::marker_type::abort, 3, 13)).value(), std::nullopt);
  ASSERT_TRUE(offer(txn_batch(0, 2, 14)));
  EXPECT_EQ(end(marker_batch(0, model::marker_type::abort, 3, 16)).value(),
            (completed_txn{producer_id{7}, offset{14}, offset{16}, true}));
}

TEST_F(producer_state_test, markers_of_an_older_producer_or_coordinator_epoch_are_fenced) {
  ASSERT_TRUE(offer(txn_batch(2, 0, 0)));
  EXPECT_EQ(end(marker_batch(1, model::marker_type::commit, 0, 2)).error(), errc::invalid_producer_epoch);
  ASSERT_TRUE(end(marker_batch(2, model::marker_type::commit, 5, 2)));
  ASSERT_TRUE(offer(txn_batch(2, 2, 3)));
  EXPECT_EQ(end(marker_batch(2, model::marker_type::abort, 4, 5)).error(), errc::coordinator_fenced);
  // The coordinator fences the producer: its abort comes with the bumped epoch, and the fenced epoch is refused.
  ASSERT_TRUE(end(marker_batch(3, model::marker_type::abort, 5, 5)));
  EXPECT_EQ(state_.find(producer_id{7})->epoch, producer_epoch{3});
  EXPECT_EQ(offer(txn_batch(2, 4, 6)).error(), errc::invalid_producer_epoch);
  EXPECT_EQ(offer(txn_batch(3, 4, 6)).error(), errc::out_of_order_sequence);  // the new epoch starts at 0
  EXPECT_TRUE(offer(txn_batch(3, 0, 6)));
}

TEST_F(producer_state_test, snapshots_keep_open_transactions_and_coordinator_epochs) {
  ASSERT_TRUE(offer(txn_batch(0, 0, 0)));
  ASSERT_TRUE(end(marker_batch(0, model::marker_type::commit, 9, 2)));
  ASSERT_TRUE(offer(txn_batch(0, 2, 3)));  // open at 3
  ASSERT_TRUE(offer(batch(0, 0, 2, 5, 8)));
  auto loaded = producer_state_manager::deserialize(state_.serialize());
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_EQ(loaded.value().find(producer_id{7}), state_.find(producer_id{7}));
  EXPECT_EQ(loaded.value().find(producer_id{8}), state_.find(producer_id{8}));
  EXPECT_EQ(loaded.value().first_unstable_offset(offset{10}), offset{3});
}

TEST_F(producer_state_test, a_version_1_snapshot_still_loads) {
  // Version 1, one producer (id 7, epoch 2) with one batch: sequences 0-1 at offsets 4-5, max timestamp 99.
  std::vector<std::byte> bytes;
  auto put = [&](std::uint64_t v, int size) {
    for (int i = size - 1; i >= 0; --i) bytes.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  };
  put(1, 2);
  put(0, 4);  // CRC, below
  put(1, 4);
  put(7, 8);
  put(2, 2);
  put(1, 1);
  put(0, 4);
  put(1, 4);
  put(4, 8);
  put(5, 8);
  put(99, 8);
  const std::uint32_t crc = bytes::crc32c(std::span(bytes).subspan(6));
  for (int i = 0; i < 4; ++i) bytes[2 + i] = static_cast<std::byte>((crc >> (8 * (3 - i))) & 0xff);
  const auto loaded = producer_state_manager::deserialize(bytes);
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_EQ(loaded.value().find(producer_id{7}),
            (producer_entry{producer_epoch{2}, {{0, 1, offset{4}, offset{5}, 99}}, -1, std::nullopt, 99}));
}

TEST_F(producer_state_test, a_producer_with_an_open_transaction_outlives_retention) {
  ASSERT_TRUE(offer(txn_batch(0, 0, 0)));
  state_.remove_before(offset{100});
  EXPECT_TRUE(state_.find(producer_id{7}));
  EXPECT_EQ(state_.first_unstable_offset(offset{100}), offset{0});
}

}  // namespace
}  // namespace ferry::storage

namespace ferry::storage {
namespace {

// Where RecordBatch v2 keeps these header fields.
constexpr std::size_t base_timestamp_position = 27;
constexpr std::size_t max_timestamp_position = 35;
constexpr std::size_t producer_id_position = 43;

std::vector<std::byte> batch_at(std::int64_t producer, std::int32_t sequence, std::int64_t timestamp) {
  model::testing::batch_spec spec;
  spec.records.push_back({"k", "v", {}, 0});
  spec.producer = producer_id{producer};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = sequence;
  spec.base_timestamp = timestamp;
  return model::testing::build_batch(spec);
}

// Review finding 9: producer.id.expiration.ms. A million short-lived idempotent producers (each producer instance
// has an id of its own) come and go; the state holds only those seen within the expiration time.
TEST(producer_expiry, a_million_short_lived_producers_leave_the_state_flat) {
  producer_state_manager state;
  constexpr std::int64_t expiration_ms = 1000;
  std::int64_t now = 1'700'000'000'000;
  std::size_t most = 0;
  // One batch, its producer id and timestamps rewritten in place (the state reads the header only).
  auto bytes = batch_at(0, 0, now);
  for (std::int64_t id = 0; id < 1'000'000; ++id) {
    bytes::store_big<std::int64_t>(bytes, producer_id_position, id);
    bytes::store_big<std::int64_t>(bytes, base_timestamp_position, now);
    bytes::store_big<std::int64_t>(bytes, max_timestamp_position, now);
    state.update(model::batch_header_view(bytes));
    if (id % 1000 == 999) {
      now += 100;  // 10,000 producers a second
      state.remove_expired(now, expiration_ms);
      most = std::max(most, state.all().size());
    }
  }
  EXPECT_LE(most, 11'000u);
  EXPECT_LT(state.serialize().size(), 11'000u * 64);
}

TEST(producer_expiry, an_expired_producer_is_new_again_unless_its_transaction_is_open) {
  producer_state_manager state;
  const auto first = batch_at(7, 40, 1000);
  state.update(model::batch_header_view(first));
  // Sequence 50 does not follow 40: out of order while the producer is remembered.
  const auto gap = batch_at(7, 50, 2000);
  EXPECT_EQ(state.check(model::batch_header_view(gap)).error(), errc::out_of_order_sequence);
  EXPECT_EQ(state.remove_expired(1999, 1000), 0u);
  EXPECT_EQ(state.remove_expired(2000, 1000), 1u);
  // Forgotten: its next batch is a new producer's (KIP-360), whatever its sequence.
  EXPECT_TRUE(state.check(model::batch_header_view(gap)));
  // A producer inside a transaction stays however old it is.
  model::testing::batch_spec spec;
  spec.records.push_back({"k", "v", {}, 0});
  spec.producer = producer_id{8};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = 0;
  spec.base_timestamp = 1000;
  spec.transactional = true;
  const auto open = model::testing::build_batch(spec);
  state.update(model::batch_header_view(open));
  EXPECT_EQ(state.remove_expired(1'000'000, 1000), 0u);
  EXPECT_TRUE(state.find(producer_id{8}));
}

}  // namespace
}  // namespace ferry::storage
