#include "group/consumer_protocol.h"

#include <gtest/gtest.h>

#include <vector>

#include "group/tests/hand_bytes.h"

namespace ferry::group {
namespace {

using testing::expect_every_prefix_truncated;
using testing::hand_bytes;
using testing::to_bytes;

std::vector<partition_id> partitions(std::initializer_list<std::int32_t> ids) {
  std::vector<partition_id> out;
  for (const std::int32_t id : ids) out.emplace_back(id);
  return out;
}

subscription example_subscription(std::int16_t version) {
  subscription s;
  s.version = version;
  s.topics = {"a", "b"};
  s.user_data = to_bytes("U");
  if (version >= 1) s.owned_partitions = {{"a", partitions({0, 3})}};
  if (version >= 2) s.generation_id = 7;
  if (version >= 3) s.rack_id = "r1";
  return s;
}

// The example in each version, written field by field from ConsumerProtocolSubscription.json.
std::vector<std::byte> subscription_bytes(std::int16_t version) {
  hand_bytes b;
  b.i16(version).i32(2).str("a").str("b").blob("U");
  if (version >= 1) b.i32(1).str("a").i32(2).i32(0).i32(3);
  if (version >= 2) b.i32(7);
  if (version >= 3) b.str("r1");
  return b.bytes();
}

TEST(Subscription, EveryVersionByteForByte) {
  for (std::int16_t version = 0; version <= 3; ++version) {
    SCOPED_TRACE(version);
    const subscription s = example_subscription(version);
    EXPECT_EQ(encode_subscription(s), subscription_bytes(version));
    const auto decoded = decode_subscription(subscription_bytes(version));
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_EQ(decoded.value(), s);
  }
}

TEST(Subscription, FieldsAVersionLacksAreNotWritten) {
  // A version 3 subscription written as version 0 keeps only topics and user data.
  subscription s = example_subscription(3);
  s.version = 0;
  EXPECT_EQ(encode_subscription(s), subscription_bytes(0));
}

TEST(Subscription, NullUserDataAndRack) {
  subscription s;
  s.version = 3;
  s.topics = {"t"};
  const auto expected = hand_bytes().i16(3).i32(1).str("t").i32(-1).i32(0).i32(-1).i16(-1).bytes();
  EXPECT_EQ(encode_subscription(s), expected);
  const auto decoded = decode_subscription(expected);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), s);
  EXPECT_FALSE(decoded.value().user_data);
  EXPECT_FALSE(decoded.value().rack_id);
}

TEST(Subscription, NewerVersionsAreReadAsVersion3) {
  // A future version appends fields; what version 3 knows is read and the rest ignored.
  std::vector<std::byte> bytes = subscription_bytes(3);
  bytes[1] = std::byte{5};
  for (const auto b : hand_bytes().i32(42).text("future fields").bytes()) bytes.push_back(b);
  const auto decoded = decode_subscription(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message();
  subscription expected = example_subscription(3);
  expected.version = 5;
  EXPECT_EQ(decoded.value(), expected);
  // Written back with its version number and version 3's fields.
  std::vector<std::byte> written = subscription_bytes(3);
  written[1] = std::byte{5};
  EXPECT_EQ(encode_subscription(decoded.value()), written);
}

TEST(Subscription, RefusesMalformedSubscriptions) {
  for (std::int16_t version = 0; version <= 3; ++version) {
    SCOPED_TRACE(version);
    const auto valid = subscription_bytes(version);
    expect_every_prefix_truncated(valid, decode_subscription);
    auto trailing = valid;
    trailing.push_back(std::byte{0});
    EXPECT_EQ(decode_subscription(trailing).error(), bytes::codec_errc::trailing_bytes);
  }
  EXPECT_EQ(decode_subscription(hand_bytes().i16(-1).i32(0).i32(-1).bytes()).error(),
            bytes::codec_errc::unsupported_version);
  // Topics are not nullable; a count the bytes cannot hold fails before allocating.
  EXPECT_EQ(decode_subscription(hand_bytes().i16(0).i32(-1).i32(-1).bytes()).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_subscription(hand_bytes().i16(0).i32(-3).i32(-1).bytes()).error(),
            bytes::codec_errc::invalid_length);
  EXPECT_EQ(decode_subscription(hand_bytes().i16(0).i32(0x7fffffff).str("a").bytes()).error(),
            bytes::codec_errc::truncated);
  EXPECT_EQ(decode_subscription(hand_bytes().i16(0).i32(1).i16(-1).i32(-1).bytes()).error(),
            bytes::codec_errc::unexpected_null);
  // Owned partitions, and their partition lists, are not nullable either.
  EXPECT_EQ(decode_subscription(hand_bytes().i16(1).i32(0).i32(-1).i32(-1).bytes()).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_subscription(hand_bytes().i16(1).i32(0).i32(-1).i32(1).str("a").i32(-1).bytes()).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(
      decode_subscription(hand_bytes().i16(1).i32(0).i32(-1).i32(1).str("a").i32(0x40000000).i32(1).bytes()).error(),
      bytes::codec_errc::truncated);
}

TEST(Subscription, EncoderRefusesNegativeVersionsAndLongStrings) {
  subscription s = example_subscription(3);
  s.version = -1;
  EXPECT_TRUE(encode_subscription(s).empty());
  s = example_subscription(3);
  s.topics.emplace_back(32768, 't');
  EXPECT_TRUE(encode_subscription(s).empty());
}

assignment example_assignment(std::int16_t version) {
  assignment a;
  a.version = version;
  a.assigned_partitions = {{"a", partitions({0, 3})}, {"b", {}}};
  a.user_data = to_bytes("U");
  return a;
}

std::vector<std::byte> assignment_bytes(std::int16_t version) {
  return hand_bytes().i16(version).i32(2).str("a").i32(2).i32(0).i32(3).str("b").i32(0).blob("U").bytes();
}

TEST(Assignment, EveryVersionByteForByte) {
  // Versions 1-3 changed nothing in the assignment itself; they follow the subscription's.
  for (std::int16_t version = 0; version <= 3; ++version) {
    SCOPED_TRACE(version);
    EXPECT_EQ(encode_assignment(example_assignment(version)), assignment_bytes(version));
    const auto decoded = decode_assignment(assignment_bytes(version));
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_EQ(decoded.value(), example_assignment(version));
  }
  assignment empty;
  empty.version = 0;
  const auto expected = hand_bytes().i16(0).i32(0).i32(-1).bytes();
  EXPECT_EQ(encode_assignment(empty), expected);
  const auto decoded = decode_assignment(expected);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), empty);
}

TEST(Assignment, NewerVersionsAreReadAsVersion3) {
  std::vector<std::byte> bytes = assignment_bytes(4);
  bytes.push_back(std::byte{0x01});
  const auto decoded = decode_assignment(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded.value(), example_assignment(4));
  EXPECT_EQ(encode_assignment(decoded.value()), assignment_bytes(4));
}

TEST(Assignment, RefusesMalformedAssignments) {
  for (std::int16_t version = 0; version <= 3; ++version) {
    SCOPED_TRACE(version);
    const auto valid = assignment_bytes(version);
    expect_every_prefix_truncated(valid, decode_assignment);
    auto trailing = valid;
    trailing.push_back(std::byte{0});
    EXPECT_EQ(decode_assignment(trailing).error(), bytes::codec_errc::trailing_bytes);
  }
  EXPECT_EQ(decode_assignment(hand_bytes().i16(-2).i32(0).i32(-1).bytes()).error(),
            bytes::codec_errc::unsupported_version);
  EXPECT_EQ(decode_assignment(hand_bytes().i16(0).i32(-1).i32(-1).bytes()).error(), bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_assignment(hand_bytes().i16(0).i32(0x7fffffff).i32(-1).bytes()).error(),
            bytes::codec_errc::truncated);
  EXPECT_EQ(decode_assignment(hand_bytes().i16(0).i32(0).i32(-2).bytes()).error(), bytes::codec_errc::invalid_length);
  EXPECT_EQ(decode_assignment(hand_bytes().i16(0).i32(0).i32(5).text("abc").bytes()).error(),
            bytes::codec_errc::truncated);
  // An empty buffer (what SyncGroup gives a member the leader left out) holds no assignment.
  EXPECT_EQ(decode_assignment({}).error(), bytes::codec_errc::truncated);
}

}  // namespace
}  // namespace ferry::group
