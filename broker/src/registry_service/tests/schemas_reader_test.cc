#include "registry_service/schemas_reader.h"

#include <gtest/gtest.h>

#include "model/batch_builder.h"
#include "model/record_batch.h"

namespace ferry::registry_service {
namespace {

std::vector<std::byte> batch_at(std::int64_t base,
                                const std::vector<std::pair<std::string, std::optional<std::string>>>& records) {
  model::batch_builder builder({.base_offset = offset{base}});
  for (const auto& [key, value] : records)
    builder.add(1, std::as_bytes(std::span(key)),
                value ? std::optional(std::as_bytes(std::span(*value))) : std::nullopt);
  return builder.finish().value();
}

TEST(SchemasReader, DecodesWholeBatchesFromThePositionOnAndLeavesAPartialOne) {
  auto bytes = batch_at(0, {{"k0", "v0"}, {"k1", std::nullopt}});
  const auto second = batch_at(2, {{"k2", "v2"}});
  bytes.insert(bytes.end(), second.begin(), second.end());
  const auto whole = bytes.size();
  const auto third = batch_at(3, {{"k3", "v3"}});
  bytes.insert(bytes.end(), third.begin(), third.begin() + 20);  // cut by the fetch's size limit

  const auto from_one = decode_fetched(bytes, 1);
  EXPECT_FALSE(from_one.damaged);
  EXPECT_EQ(from_one.next_offset, 3);
  ASSERT_EQ(from_one.records.size(), 2U) << "the record before the position is skipped";
  EXPECT_EQ(from_one.records[0].key, "k1");
  EXPECT_FALSE(from_one.records[0].value) << "a tombstone stays a tombstone";
  EXPECT_EQ(from_one.records[1].value, "v2");

  const auto all = decode_fetched(std::span(bytes).first(whole), 0);
  EXPECT_EQ(all.records.size(), 3U);
}

TEST(SchemasReader, StopsAtADamagedBatch) {
  auto bytes = batch_at(0, {{"k0", "v0"}});
  bytes.back() = std::byte{0x7f};  // the CRC no longer matches
  const auto decoded = decode_fetched(bytes, 0);
  EXPECT_TRUE(decoded.damaged);
  EXPECT_TRUE(decoded.records.empty());
  EXPECT_EQ(decoded.next_offset, 0);
}

}  // namespace
}  // namespace ferry::registry_service
