#include "model/record_batch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/testing/batch_builder.h"

namespace ferry::model {
namespace {

using testing::build_simple_batch;

TEST(record_batch, a_built_batch_is_valid) {
  const auto batch = build_simple_batch(5);
  EXPECT_FALSE(validate_batch(batch, {}));
  const batch_header_view header(batch);
  EXPECT_EQ(header.records_count(), 5);
  EXPECT_EQ(header.last_offset_delta(), 4);
  EXPECT_EQ(header.total_size(), batch.size());
  EXPECT_EQ(peek_batch_size(batch), batch.size());
}

TEST(record_batch, assigning_offsets_keeps_the_crc_valid) {
  auto batch = build_simple_batch(3);
  set_base_offset(batch, offset{1000});
  set_partition_leader_epoch(batch, leader_epoch{7});
  const batch_header_view header(batch);
  EXPECT_EQ(header.base_offset(), offset{1000});
  EXPECT_EQ(header.last_offset(), offset{1002});
  EXPECT_EQ(header.partition_leader_epoch(), leader_epoch{7});
  EXPECT_FALSE(validate_batch(batch, {.from_client = false}));
  EXPECT_EQ(validate_batch(batch, {}), errc::nonzero_base_offset);
}

// The base offset is outside the CRC: a damaged stored batch may carry one whose offsets run past INT64_MAX
// (found by record_batch_fuzz).
TEST(record_batch, offsets_past_int64_max_are_refused) {
  auto batch = build_simple_batch(3);
  set_base_offset(batch, offset{INT64_MAX - 3});
  EXPECT_FALSE(validate_batch(batch, {.from_client = false}));
  EXPECT_EQ(batch_header_view(batch).last_offset(), offset{INT64_MAX - 1});
  set_base_offset(batch, offset{INT64_MAX - 2});
  EXPECT_EQ(validate_batch(batch, {.from_client = false}), errc::offset_overflow);
  set_base_offset(batch, offset{INT64_MAX});
  EXPECT_EQ(validate_batch(batch, {.from_client = false}), errc::offset_overflow);
}

TEST(record_batch, log_append_time_rewrites_the_crc) {
  auto batch = build_simple_batch(3);
  set_log_append_time(batch, 1'800'000'000'000);
  const batch_header_view header(batch);
  EXPECT_EQ(header.ts_type(), timestamp_type::log_append_time);
  EXPECT_EQ(header.max_timestamp(), 1'800'000'000'000);
  EXPECT_FALSE(validate_batch(batch, {}));
}

TEST(record_batch, a_flipped_payload_bit_fails_the_crc) {
  auto batch = build_simple_batch(2);
  batch.back() ^= std::byte{0x01};
  EXPECT_EQ(validate_batch(batch, {}), errc::crc_mismatch);
}

TEST(record_batch, truncation_and_length_lies_are_caught) {
  const auto batch = build_simple_batch(2);
  EXPECT_EQ(validate_batch(std::span(batch).first(40), {}), errc::batch_too_short);
  EXPECT_EQ(validate_batch(std::span(batch).first(batch.size() - 1), {}), errc::batch_too_short);
  EXPECT_EQ(peek_batch_size(std::span(batch).first(8)), 0u);
}

TEST(record_batch, size_limit_applies) {
  const auto batch = build_simple_batch(50);
  EXPECT_EQ(validate_batch(batch, {.max_batch_bytes = 100}), errc::batch_too_large);
}

TEST(record_batch, wrong_magic_is_refused) {
  auto batch = build_simple_batch(1);
  batch[16] = std::byte{1};
  EXPECT_EQ(validate_batch(batch, {}), errc::unsupported_magic);
}

TEST(record_batch, producer_id_needs_a_sequence) {
  testing::batch_spec spec;
  spec.records.push_back({"k", "v", {}, 0});
  spec.producer = producer_id{42};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = -1;
  EXPECT_EQ(validate_batch(testing::build_batch(spec), {}), errc::invalid_producer_fields);
  spec.base_sequence = 0;
  EXPECT_FALSE(validate_batch(testing::build_batch(spec), {}));
}

TEST(record_batch, sequences_wrap) {
  testing::batch_spec spec;
  for (int i = 0; i < 3; ++i) spec.records.push_back({"k", "v", {}, 0});
  spec.producer = producer_id{1};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = INT32_MAX - 1;
  const auto batch = testing::build_batch(spec);
  EXPECT_EQ(batch_header_view(batch).last_sequence(), 0);
}

TEST(record_batch, batches_written_by_real_clients_validate) {
  // The fuzz seed corpus holds batches from librdkafka (every codec) and kafka-python, as clients sent them.
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FERRY_RECORD_BATCH_CORPUS)) {
    if (!entry.path().filename().string().ends_with("-batch")) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(raw.data()), raw.size());
    EXPECT_FALSE(validate_batch(bytes, {})) << entry.path();
    EXPECT_GT(batch_header_view(bytes).records_count(), 0) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

}  // namespace
}  // namespace ferry::model
