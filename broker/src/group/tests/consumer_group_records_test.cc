#include "group/consumer_group_records.h"

#include <gtest/gtest.h>

#include "group/offsets_records.h"
#include "group/tests/hand_bytes.h"

namespace ferry::group {
namespace {

using testing::hand_bytes;

constexpr topic_uuid topic{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

consumer_group_record decoded(const consumer_group_key& key, const std::optional<consumer_group_value>& value) {
  const auto k = encode_key(key);
  std::optional<std::vector<std::byte>> v;
  if (value) v = encode_value(*value);
  const auto r = decode_record(k, v ? std::optional<std::span<const std::byte>>(*v) : std::nullopt);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? std::get<consumer_group_record>(r.value()) : consumer_group_record{};
}

}  // namespace

TEST(ConsumerGroupRecords, GroupEpochAsKafkaWritesIt) {
  const consumer_group_key key{consumer_record_type::group_metadata, "grp", {}};
  EXPECT_EQ(encode_key(key), hand_bytes().i16(3).str("grp").bytes());
  // Version 0, the epoch, an empty tagged-field section.
  EXPECT_EQ(encode_value(consumer_group_value{consumer_group_epoch_value{7}}),
            hand_bytes().i16(0).i32(7).raw({0x00}).bytes());
}

TEST(ConsumerGroupRecords, EveryTypeReadsBackAsWritten) {
  const consumer_member_value member{"instance", std::nullopt, "client", "/10.0.0.1",
                                     {"a", "b"}, std::nullopt, 30000,    "range"};
  const current_assignment_value current{5, 4, 1, {{topic, {0, 2}}}, {{topic, {1}}}};
  const std::vector<consumer_group_record> records{
      {{consumer_record_type::group_metadata, "g", {}}, consumer_group_epoch_value{5}},
      {{consumer_record_type::member_metadata, "g", "m"}, member},
      {{consumer_record_type::target_assignment_metadata, "g", {}}, target_assignment_epoch_value{5}},
      {{consumer_record_type::target_assignment_member, "g", "m"}, target_assignment_value{{{topic, {0, 2}}}}},
      {{consumer_record_type::current_assignment, "g", "m"}, current},
      {{consumer_record_type::current_assignment, "g", "m"}, std::nullopt},
  };
  for (const auto& r : records) EXPECT_EQ(decoded(r.key, r.value), r);
}

TEST(ConsumerGroupRecords, TaggedFieldsOfNewerKafkasAreSkipped) {
  // Kafka 4.1 writes the metadata hash as tagged field 0 of the group record.
  const auto value = hand_bytes().i16(0).i32(9).raw({0x01, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8}).bytes();
  const auto key = hand_bytes().i16(3).str("g").bytes();
  const auto r = decode_record(key, std::span<const std::byte>(value));
  ASSERT_TRUE(r);
  EXPECT_EQ(std::get<consumer_group_record>(r.value()).value,
            std::optional<consumer_group_value>(consumer_group_epoch_value{9}));
}

TEST(ConsumerGroupRecords, RefusesMalformedValues) {
  const auto key = hand_bytes().i16(8).str("g").str("m").bytes();
  for (const std::vector<std::byte>& bad :
       std::vector<std::vector<std::byte>>{hand_bytes().i16(1).i32(1).bytes(), hand_bytes().i16(0).i32(1).bytes(),
                                           hand_bytes().i16(0).i32(1).i32(0).raw({0x00, 0x7f}).bytes()}) {
    EXPECT_FALSE(decode_record(key, std::span<const std::byte>(bad)));
  }
}

}  // namespace ferry::group
