#include "group/offsets_records.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "group/tests/hand_bytes.h"

namespace ferry::group {
namespace {

using testing::expect_every_prefix_truncated;
using testing::hand_bytes;
using testing::to_bytes;

std::vector<std::byte> with_trailing_byte(std::vector<std::byte> bytes) {
  bytes.push_back(std::byte{0});
  return bytes;
}

// --- keys ---

TEST(OffsetsRecordsKey, OffsetCommitKeyIsVersion1) {
  const offset_commit_key key{"g", "t", partition_id{5}};
  const auto expected = hand_bytes().i16(1).str("g").str("t").i32(5).bytes();
  EXPECT_EQ(encode_key(key), expected);
  const auto decoded = decode_key(expected);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), record_key{key});
}

TEST(OffsetsRecordsKey, Version0IsAnOffsetCommitKeyToo) {
  const auto decoded = decode_key(hand_bytes().i16(0).str("group").str("orders").i32(12).bytes());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), record_key{(offset_commit_key{"group", "orders", partition_id{12}})});
}

TEST(OffsetsRecordsKey, GroupMetadataKeyIsVersion2) {
  const group_metadata_key key{"grp"};
  const auto expected = hand_bytes().i16(2).str("grp").bytes();
  EXPECT_EQ(encode_key(key), expected);
  const auto decoded = decode_key(expected);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), record_key{key});
}

TEST(OffsetsRecordsKey, OtherVersionsAreUnknownAndNotReadFurther) {
  // 4: subscription metadata (its group id follows), 16: regular expressions, 23: streams topology; and
  // numbers no Kafka uses.
  for (const std::int16_t version : {4, 11, 16, 23, 100, -1}) {
    const auto decoded = decode_key(hand_bytes().i16(version).raw({0xff, 0xff, 0x01}).bytes());
    ASSERT_TRUE(decoded) << version;
    EXPECT_EQ(decoded.value(), record_key{unknown_key{version}});
  }
  const auto bare = decode_key(hand_bytes().i16(9).bytes());
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare.value(), record_key{unknown_key{9}});
}

TEST(OffsetsRecordsKey, RefusesMalformedKeys) {
  const auto valid = hand_bytes().i16(1).str("g").str("t").i32(5).bytes();
  expect_every_prefix_truncated(valid, decode_key);
  expect_every_prefix_truncated(hand_bytes().i16(2).str("grp").bytes(), decode_key);

  EXPECT_EQ(decode_key(with_trailing_byte(valid)).error(), bytes::codec_errc::trailing_bytes);
  EXPECT_EQ(decode_key(with_trailing_byte(encode_key(group_metadata_key{"g"}))).error(),
            bytes::codec_errc::trailing_bytes);
  EXPECT_EQ(decode_key(hand_bytes().i16(1).i16(-1).str("t").i32(0).bytes()).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_key(hand_bytes().i16(2).i16(-1).bytes()).error(), bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_key(hand_bytes().i16(1).i16(-2).bytes()).error(), bytes::codec_errc::invalid_length);
  EXPECT_EQ(decode_key(hand_bytes().i16(2).i16(-32768).bytes()).error(), bytes::codec_errc::invalid_length);
}

TEST(OffsetsRecordsKey, StringsOver32767BytesAreNotWritten) {
  const std::string longest(32767, 'x');
  const std::string too_long(32768, 'x');
  const auto written = encode_key(offset_commit_key{longest, "t", partition_id{0}});
  ASSERT_EQ(written.size(), 2 + 2 + longest.size() + 2 + 1 + 4);
  const auto decoded = decode_key(written);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(std::get<offset_commit_key>(decoded.value()).group, longest);

  EXPECT_TRUE(encode_key(offset_commit_key{too_long, "t", partition_id{0}}).empty());
  EXPECT_TRUE(encode_key(offset_commit_key{"g", too_long, partition_id{0}}).empty());
  EXPECT_TRUE(encode_key(group_metadata_key{too_long}).empty());
}

// --- offset commit values ---

// offset 42, leader epoch 7, metadata "m", commit timestamp 1000.
offset_commit_value example_commit() { return {offset{42}, leader_epoch{7}, "m", 1000, std::nullopt}; }

TEST(OffsetCommitValue, Version3ByteForByte) {
  // version 3, offset 42, leader epoch 7, metadata "m", commit timestamp 1000.
  const std::vector<std::byte> expected = {
      std::byte{0x00}, std::byte{0x03},                                    // version
      std::byte{0x00}, std::byte{0x00}, std::byte{0x00}, std::byte{0x00},  //
      std::byte{0x00}, std::byte{0x00}, std::byte{0x00}, std::byte{0x2a},  // offset
      std::byte{0x00}, std::byte{0x00}, std::byte{0x00}, std::byte{0x07},  // leader epoch
      std::byte{0x00}, std::byte{0x01}, std::byte{'m'},                    // metadata
      std::byte{0x00}, std::byte{0x00}, std::byte{0x00}, std::byte{0x00},  //
      std::byte{0x00}, std::byte{0x00}, std::byte{0x03}, std::byte{0xe8},  // commit timestamp
  };
  EXPECT_EQ(encode_value(example_commit()), expected);
  EXPECT_EQ(encode_offset_commit_value(example_commit(), 3), expected);
  const auto decoded = decode_offset_commit_value(expected);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), example_commit());
}

// The example in each version Kafka has written, with what each keeps of it.
struct commit_version_case {
  std::int16_t version;
  std::vector<std::byte> bytes;
  offset_commit_value decoded;
};

std::vector<commit_version_case> commit_versions() {
  const offset_commit_value without_epoch{offset{42}, no_leader_epoch, "m", 1000, std::nullopt};
  return {
      {0, hand_bytes().i16(0).i64(42).str("m").i64(1000).bytes(), without_epoch},
      // Version 1 always has the expire timestamp; -1 is none.
      {1, hand_bytes().i16(1).i64(42).str("m").i64(1000).i64(-1).bytes(), without_epoch},
      {2, hand_bytes().i16(2).i64(42).str("m").i64(1000).bytes(), without_epoch},
      {3, hand_bytes().i16(3).i64(42).i32(7).str("m").i64(1000).bytes(), example_commit()},
      // Flexible: compact metadata (length + 1), and an empty tagged-field section.
      {4, hand_bytes().i16(4).i64(42).i32(7).compact_str("m").i64(1000).raw({0x00}).bytes(), example_commit()},
  };
}

TEST(OffsetCommitValue, EveryVersionByteForByte) {
  for (const auto& c : commit_versions()) {
    EXPECT_EQ(encode_offset_commit_value(example_commit(), c.version), c.bytes) << "version " << c.version;
    const auto decoded = decode_offset_commit_value(c.bytes);
    ASSERT_TRUE(decoded) << "version " << c.version << ": " << decoded.error().message();
    EXPECT_EQ(decoded.value(), c.decoded) << "version " << c.version;
    // What Ferry writes back decodes to the same value.
    const auto again = decode_offset_commit_value(encode_value(decoded.value()));
    ASSERT_TRUE(again);
    EXPECT_EQ(again.value(), decoded.value());
  }
}

TEST(OffsetCommitValue, ExpireTimestampIsWrittenAsVersion1) {
  offset_commit_value v = example_commit();
  v.expire_timestamp_ms = 86'401'000;
  const auto expected = hand_bytes().i16(1).i64(42).str("m").i64(1000).i64(86'401'000).bytes();
  EXPECT_EQ(encode_value(v), expected);
  const auto decoded = decode_offset_commit_value(expected);
  ASSERT_TRUE(decoded);
  // Version 1 has no leader epoch, as in Kafka.
  v.committed_leader_epoch = no_leader_epoch;
  EXPECT_EQ(decoded.value(), v);
}

TEST(OffsetCommitValue, Version4SkipsTaggedFields) {
  // Kafka 4 writes the topic id as tag 0 (16 bytes); a later Kafka may add more tags.
  hand_bytes b = hand_bytes().i16(4).i64(42).i32(7).compact_str("m").i64(1000);
  b.raw({0x02});  // two tagged fields
  b.raw({0x00, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  b.raw({0x05, 0x02, 0xaa, 0xbb});
  const auto bytes = b.bytes();
  const auto decoded = decode_offset_commit_value(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded.value(), example_commit());

  // A tagged field running past the end.
  const auto past_end =
      hand_bytes().i16(4).i64(42).i32(7).compact_str("m").i64(1000).raw({0x01, 0x00, 0x10, 1}).bytes();
  EXPECT_EQ(decode_offset_commit_value(past_end).error(), bytes::codec_errc::truncated);
  // A count of 2^32-1 tagged fields in a few bytes.
  const auto many =
      hand_bytes().i16(4).i64(42).i32(7).compact_str("m").i64(1000).raw({0xff, 0xff, 0xff, 0xff, 0x0f}).bytes();
  EXPECT_EQ(decode_offset_commit_value(many).error(), bytes::codec_errc::truncated);
}

TEST(OffsetCommitValue, RefusesMalformedValues) {
  for (const auto& c : commit_versions()) {
    SCOPED_TRACE(c.version);
    expect_every_prefix_truncated(c.bytes, decode_offset_commit_value);
    EXPECT_EQ(decode_offset_commit_value(with_trailing_byte(c.bytes)).error(), bytes::codec_errc::trailing_bytes);
  }
  for (const std::int16_t version : {5, 6, 0x7fff, -1, -32768}) {
    const auto bytes = hand_bytes().i16(version).i64(42).i32(7).str("m").i64(1000).bytes();
    EXPECT_EQ(decode_offset_commit_value(bytes).error(), bytes::codec_errc::unsupported_version) << version;
  }
  // Metadata is not nullable, and -2 is no length.
  EXPECT_EQ(decode_offset_commit_value(hand_bytes().i16(3).i64(42).i32(7).i16(-1).i64(1000).bytes()).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_offset_commit_value(hand_bytes().i16(3).i64(42).i32(7).i16(-2).i64(1000).bytes()).error(),
            bytes::codec_errc::invalid_length);
  EXPECT_EQ(
      decode_offset_commit_value(hand_bytes().i16(4).i64(42).i32(7).raw({0x00}).i64(1000).raw({0}).bytes()).error(),
      bytes::codec_errc::unexpected_null);
  // Compact lengths: a varint of six bytes, one above 2^32-1, and a string longer than Kafka's 32767 bytes
  // (32768 + 1 = 0x8001).
  for (const auto& length : std::vector<std::vector<std::uint8_t>>{
           {0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, {0xff, 0xff, 0xff, 0xff, 0x1f}, {0x81, 0x80, 0x02}}) {
    auto bytes = hand_bytes().i16(4).i64(42).i32(7).bytes();
    for (const auto b : length) bytes.push_back(std::byte{b});
    bytes.resize(bytes.size() + 40000, std::byte{'x'});
    EXPECT_EQ(decode_offset_commit_value(bytes).error(), bytes::codec_errc::invalid_length);
  }
}

TEST(OffsetCommitValue, EncodersRefuseWhatKafkaCannotRead) {
  offset_commit_value v = example_commit();
  v.metadata.assign(32768, 'x');
  EXPECT_TRUE(encode_value(v).empty());
  EXPECT_TRUE(encode_offset_commit_value(v, 4).empty());
  EXPECT_TRUE(encode_offset_commit_value(example_commit(), 5).empty());
  EXPECT_TRUE(encode_offset_commit_value(example_commit(), -1).empty());
}

// --- group metadata values ---

group_metadata_value example_group() {
  group_metadata_value g;
  g.protocol_type = "consumer";
  g.generation = 5;
  g.protocol = "range";
  g.leader = "m1";
  g.current_state_timestamp_ms = 1234;
  g.members.push_back(member_metadata{"m1", "i1", "c", "/h", 300000, 45000, to_bytes("S"), to_bytes("A")});
  g.members.push_back(member_metadata{"m2", std::nullopt, "c2", "/h2", 60000, 10000, to_bytes(""), to_bytes("AA")});
  return g;
}

struct group_version_case {
  std::int16_t version;
  std::vector<std::byte> bytes;
  group_metadata_value decoded;
};

std::vector<group_version_case> group_versions() {
  const group_metadata_value full = example_group();

  group_metadata_value v2 = full;  // no group instance ids
  for (auto& m : v2.members) m.group_instance_id.reset();
  group_metadata_value v0_1 = v2;  // no state timestamp
  v0_1.current_state_timestamp_ms = -1;
  group_metadata_value v0 = v0_1;  // no rebalance timeout: the session timeout stands in
  for (auto& m : v0.members) m.rebalance_timeout_ms = m.session_timeout_ms;

  // The two members field by field, one a line.
  hand_bytes b0 = hand_bytes().i16(0).str("consumer").i32(5).str("range").str("m1").i32(2);
  b0.str("m1").str("c").str("/h").i32(45000).blob("S").blob("A");
  b0.str("m2").str("c2").str("/h2").i32(10000).blob("").blob("AA");

  hand_bytes b1 = hand_bytes().i16(1).str("consumer").i32(5).str("range").str("m1").i32(2);
  b1.str("m1").str("c").str("/h").i32(300000).i32(45000).blob("S").blob("A");
  b1.str("m2").str("c2").str("/h2").i32(60000).i32(10000).blob("").blob("AA");

  hand_bytes b2 = hand_bytes().i16(2).str("consumer").i32(5).str("range").str("m1").i64(1234).i32(2);
  b2.str("m1").str("c").str("/h").i32(300000).i32(45000).blob("S").blob("A");
  b2.str("m2").str("c2").str("/h2").i32(60000).i32(10000).blob("").blob("AA");

  hand_bytes b3 = hand_bytes().i16(3).str("consumer").i32(5).str("range").str("m1").i64(1234).i32(2);
  b3.str("m1").str("i1").str("c").str("/h").i32(300000).i32(45000).blob("S").blob("A");
  b3.str("m2").i16(-1).str("c2").str("/h2").i32(60000).i32(10000).blob("").blob("AA");

  // Compact strings, bytes and member count (2 + 1); a null instance id is 0; each member and the value end
  // with an empty tagged-field section.
  hand_bytes b4 = hand_bytes().i16(4).compact_str("consumer").i32(5).compact_str("range").compact_str("m1");
  b4.i64(1234).raw({0x03});
  b4.compact_str("m1").compact_str("i1").compact_str("c").compact_str("/h").i32(300000).i32(45000);
  b4.compact_blob("S").compact_blob("A").raw({0x00});
  b4.compact_str("m2").raw({0x00}).compact_str("c2").compact_str("/h2").i32(60000).i32(10000);
  b4.compact_blob("").compact_blob("AA").raw({0x00});
  b4.raw({0x00});

  return {
      {0, b0.bytes(), v0}, {1, b1.bytes(), v0_1}, {2, b2.bytes(), v2}, {3, b3.bytes(), full}, {4, b4.bytes(), full}};
}

TEST(GroupMetadataValue, EveryVersionByteForByte) {
  for (const auto& c : group_versions()) {
    EXPECT_EQ(encode_group_metadata_value(example_group(), c.version), c.bytes) << "version " << c.version;
    const auto decoded = decode_group_metadata_value(c.bytes);
    ASSERT_TRUE(decoded) << "version " << c.version << ": " << decoded.error().message();
    EXPECT_EQ(decoded.value(), c.decoded) << "version " << c.version;
    const auto again = decode_group_metadata_value(encode_value(decoded.value()));
    ASSERT_TRUE(again);
    EXPECT_EQ(again.value(), decoded.value());
  }
  // Ferry writes version 3.
  EXPECT_EQ(encode_value(example_group()), group_versions()[3].bytes);
}

TEST(GroupMetadataValue, EmptyGroup) {
  // What a group with no members is stored as: no protocol, no leader, no members.
  group_metadata_value empty;
  empty.protocol_type = "consumer";
  empty.generation = 3;
  empty.current_state_timestamp_ms = 99;
  const auto expected = hand_bytes().i16(3).str("consumer").i32(3).i16(-1).i16(-1).i64(99).i32(0).bytes();
  EXPECT_EQ(encode_value(empty), expected);
  const auto decoded = decode_group_metadata_value(expected);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), empty);
  const auto flexible = hand_bytes().i16(4).compact_str("consumer").i32(3).raw({0, 0}).i64(99).raw({1, 0}).bytes();
  EXPECT_EQ(encode_group_metadata_value(empty, 4), flexible);
  ASSERT_TRUE(decode_group_metadata_value(flexible));
  EXPECT_EQ(decode_group_metadata_value(flexible).value(), empty);
}

TEST(GroupMetadataValue, Version4SkipsTaggedFieldsOfMembersAndValue) {
  hand_bytes b = hand_bytes().i16(4).compact_str("consumer").i32(5).compact_str("range").compact_str("m1");
  b.i64(1234).raw({0x02});
  b.compact_str("m1").compact_str("i1").compact_str("c").compact_str("/h").i32(300000).i32(45000);
  b.compact_blob("S").compact_blob("A");
  b.raw({0x01, 0x03, 0x02, 0xaa, 0xbb});        // the member's tagged fields: tag 3, two bytes
  b.raw({0x02, 0x00, 0x00, 0x07, 0x01, 0xcc});  // the value's: tag 0 empty, tag 7 one byte
  const auto bytes = b.bytes();
  const auto decoded = decode_group_metadata_value(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message();
  group_metadata_value expected = example_group();
  expected.members.pop_back();
  EXPECT_EQ(decoded.value(), expected);
}

TEST(GroupMetadataValue, RefusesMalformedValues) {
  for (const auto& c : group_versions()) {
    SCOPED_TRACE(c.version);
    expect_every_prefix_truncated(c.bytes, decode_group_metadata_value);
    EXPECT_EQ(decode_group_metadata_value(with_trailing_byte(c.bytes)).error(), bytes::codec_errc::trailing_bytes);
  }
  EXPECT_EQ(decode_group_metadata_value(hand_bytes().i16(5).str("consumer").bytes()).error(),
            bytes::codec_errc::unsupported_version);
  EXPECT_EQ(decode_group_metadata_value(hand_bytes().i16(-1).str("consumer").bytes()).error(),
            bytes::codec_errc::unsupported_version);

  const auto head = [] { return hand_bytes().i16(3).str("consumer").i32(5).str("range").str("m1").i64(1234); };
  // A member count the bytes cannot hold fails before anything is allocated for it.
  EXPECT_EQ(decode_group_metadata_value(head().i32(0x7fffffff).bytes()).error(), bytes::codec_errc::truncated);
  hand_bytes many = hand_bytes().i16(4).compact_str("consumer").i32(5).raw({0, 0}).i64(1);
  many.raw({0xff, 0xff, 0xff, 0xff, 0x0f});  // compact: 2^32-2 members
  EXPECT_EQ(decode_group_metadata_value(many.bytes()).error(), bytes::codec_errc::truncated);
  // Members are not nullable; -2 is no count.
  EXPECT_EQ(decode_group_metadata_value(head().i32(-1).bytes()).error(), bytes::codec_errc::unexpected_null);
  EXPECT_EQ(decode_group_metadata_value(head().i32(-2).bytes()).error(), bytes::codec_errc::invalid_length);
  // Not nullable: protocol type, member id, client id, client host, subscription, assignment.
  EXPECT_EQ(
      decode_group_metadata_value(hand_bytes().i16(3).i16(-1).i32(5).i16(-1).i16(-1).i64(0).i32(0).bytes()).error(),
      bytes::codec_errc::unexpected_null);
  const auto member = [&](auto&& fill) {
    hand_bytes b = head().i32(1);
    fill(b);
    return decode_group_metadata_value(b.bytes());
  };
  EXPECT_EQ(member([](hand_bytes& b) { b.i16(-1).i16(-1).str("c").str("/h").i32(1).i32(1).blob("").blob(""); }).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(member([](hand_bytes& b) { b.str("m").i16(-1).i16(-1).str("/h").i32(1).i32(1).blob("").blob(""); }).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(member([](hand_bytes& b) { b.str("m").i16(-1).str("c").str("/h").i32(1).i32(1).i32(-1).blob(""); }).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(member([](hand_bytes& b) { b.str("m").i16(-1).str("c").str("/h").i32(1).i32(1).blob("").i32(-1); }).error(),
            bytes::codec_errc::unexpected_null);
  EXPECT_EQ(member([](hand_bytes& b) { b.str("m").i16(-1).str("c").str("/h").i32(1).i32(1).i32(-7).blob(""); }).error(),
            bytes::codec_errc::invalid_length);
  // Subscription bytes claiming 2^31-1 bytes.
  EXPECT_EQ(member([](hand_bytes& b) {
              b.str("m").i16(-1).str("c").str("/h").i32(1).i32(1).i32(0x7fffffff).blob("");
            }).error(),
            bytes::codec_errc::truncated);
}

TEST(GroupMetadataValue, EncodersRefuseWhatKafkaCannotRead) {
  group_metadata_value g = example_group();
  g.members[1].client_host.assign(32768, 'h');
  EXPECT_TRUE(encode_value(g).empty());
  EXPECT_TRUE(encode_group_metadata_value(g, 4).empty());
  EXPECT_TRUE(encode_group_metadata_value(example_group(), 5).empty());
}

// --- whole records ---

TEST(OffsetsRecord, TombstonesAndValuesByKeyType) {
  const offset_commit_key ok{"g", "t", partition_id{1}};
  const group_metadata_key gk{"g"};
  const auto ok_bytes = encode_key(ok);
  const auto gk_bytes = encode_key(gk);
  const auto commit = encode_value(example_commit());
  const auto group = encode_value(example_group());

  auto r = decode_record(ok_bytes, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), offsets_record{(offset_commit_record{ok, std::nullopt})});

  r = decode_record(ok_bytes, std::span<const std::byte>(commit));
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), offsets_record{(offset_commit_record{ok, example_commit()})});

  r = decode_record(gk_bytes, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), offsets_record{(group_metadata_record{gk, std::nullopt})});

  r = decode_record(gk_bytes, std::span<const std::byte>(group));
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), offsets_record{(group_metadata_record{gk, example_group()})});

  // The value of an unknown record type is not read.
  const auto garbage = to_bytes("\xff\xff garbage");
  r = decode_record(hand_bytes().i16(4).str("g").bytes(), std::span<const std::byte>(garbage));
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), offsets_record{unknown_key{4}});

  // A value is decoded by its key's type.
  EXPECT_FALSE(decode_record(ok_bytes, std::span<const std::byte>(group)));
  EXPECT_FALSE(decode_record(gk_bytes, std::span<const std::byte>(commit)));
  // An empty (present) value is not a tombstone.
  EXPECT_EQ(decode_record(ok_bytes, std::span<const std::byte>()).error(), bytes::codec_errc::truncated);
  EXPECT_EQ(decode_record({}, std::nullopt).error(), bytes::codec_errc::truncated);
}

TEST(OffsetsRecord, ErrorsDescribeThemselves) {
  const std::error_code e = bytes::codec_errc::trailing_bytes;
  EXPECT_STREQ(e.category().name(), "data.codec");
  EXPECT_EQ(e.message(), "bytes left after the record's last field");
  EXPECT_EQ(decode_key({}).error().message(), "the record ends inside a field");
}

}  // namespace
}  // namespace ferry::group
