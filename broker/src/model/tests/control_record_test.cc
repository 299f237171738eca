// Transaction markers: what build_marker_batch writes is what Kafka's EndTransactionMarker holds, and read_marker
// refuses anything else.
#include "model/control_record.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/batch_builder.h"
#include "model/record_batch.h"
#include "model/testing/batch_builder.h"

namespace ferry::model {
namespace {

TEST(ControlRecord, AMarkerBatchRoundTripsAndIsAValidStoredBatch) {
  for (const auto type : {marker_type::abort, marker_type::commit}) {
    const auto batch = build_marker_batch(producer_id{42}, producer_epoch{7}, {type, 13}, 1'700'000'000'000);
    const batch_header_view header(batch);
    EXPECT_TRUE(header.is_control());
    EXPECT_TRUE(header.is_transactional());
    EXPECT_EQ(header.producer(), producer_id{42});
    EXPECT_EQ(header.epoch(), producer_epoch{7});
    EXPECT_EQ(header.base_sequence(), -1);
    EXPECT_EQ(header.records_count(), 1);
    EXPECT_FALSE(validate_batch(batch, {.max_batch_bytes = SIZE_MAX, .from_client = false}));
    EXPECT_EQ(validate_batch(batch, {}), errc::control_batch_from_client);
    const auto marker = read_marker(batch);
    ASSERT_TRUE(marker) << marker.error().message();
    EXPECT_EQ(marker.value(), (txn_marker{type, 13}));
  }
}

TEST(ControlRecord, TheKeyAndValueAreKafkasLayout) {
  // Key: version 0, type 1 (commit). Value: version 0, coordinator epoch 0x01020304.
  const auto batch = build_marker_batch(producer_id{1}, producer_epoch{0}, {marker_type::commit, 0x01020304}, 0);
  const std::byte key[] = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}};
  const std::byte value[] = {std::byte{0}, std::byte{0}, std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  batch_builder builder(
      {.producer = producer_id{1}, .epoch = producer_epoch{0}, .transactional = true, .control = true});
  builder.add(0, std::span<const std::byte>(key), std::span<const std::byte>(value));
  EXPECT_EQ(batch, builder.finish().value());
}

TEST(ControlRecord, ADataBatchOrAnUnknownTypeIsNotAMarker) {
  EXPECT_EQ(read_marker(testing::build_simple_batch(1)).error(), errc::malformed_record);
  const std::byte key[] = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{3}};  // a KRaft-only type
  const std::byte value[] = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}};
  batch_builder builder(
      {.producer = producer_id{1}, .epoch = producer_epoch{0}, .transactional = true, .control = true});
  builder.add(0, std::span<const std::byte>(key), std::span<const std::byte>(value));
  EXPECT_EQ(read_marker(builder.finish().value()).error(), errc::malformed_record);
}

// The record batch fuzz target's seed corpus holds a marker as a leader writes it (FERRY_WRITE_FUZZ_CORPUS=1
// writes it again).
TEST(ControlRecord, TheFuzzSeedIsAMarker) {
  const auto path = std::filesystem::path(FERRY_RECORD_BATCH_CORPUS) / "commit-marker";
  if (const char* writing = std::getenv("FERRY_WRITE_FUZZ_CORPUS"); writing != nullptr && *writing != '\0') {
    const auto batch =
        build_marker_batch(producer_id{5}, producer_epoch{1}, {marker_type::commit, 2}, 1'700'000'000'000);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(batch.data()), static_cast<std::streamsize>(batch.size()));
  }
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bytes = std::as_bytes(std::span(raw));
  EXPECT_FALSE(validate_batch(bytes, {.max_batch_bytes = SIZE_MAX, .from_client = false}));
  EXPECT_EQ(read_marker(bytes).value(), (txn_marker{marker_type::commit, 2}));
}

}  // namespace
}  // namespace ferry::model
