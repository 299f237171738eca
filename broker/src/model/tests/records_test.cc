// first_record_at_or_after finds the record a ListOffsets by timestamp answers with, in every codec.
#include "model/records.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <sys/resource.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "bytes/varint.h"
#include "model/batch_builder.h"
#include "model/compression.h"
#include "model/testing/batch_builder.h"

namespace ferry::model {
namespace {

constexpr std::int64_t base_ts = 1'700'000'000'000;

// 50 records at offsets 100.., timestamps base_ts + 10 * i (records 20 and 21 share one).
std::vector<std::byte> plain_batch() {
  model::testing::batch_spec spec;
  spec.base_offset = offset{100};
  spec.base_timestamp = base_ts;
  for (int i = 0; i < 50; ++i)
    spec.records.push_back(
        {"k", std::string(30, static_cast<char>('a' + i % 26)), {{"h", "v"}}, 10 * (i == 21 ? 20 : i)});
  return model::testing::build_batch(spec);
}

std::vector<std::byte> gzip(std::span<const std::byte> in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<std::byte> out(deflateBound(&zs, in.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::vector<std::byte> snappy_raw(std::span<const std::byte> in) {
  std::size_t length = snappy_max_compressed_length(in.size());
  std::vector<std::byte> out(length);
  EXPECT_EQ(snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(), reinterpret_cast<char*>(out.data()),
                            &length),
            SNAPPY_OK);
  out.resize(length);
  return out;
}

// snappy-java's framing, as the Java client writes it: two blocks.
std::vector<std::byte> snappy_xerial(std::span<const std::byte> in) {
  static constexpr unsigned char header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  std::vector<std::byte> out(reinterpret_cast<const std::byte*>(header),
                             reinterpret_cast<const std::byte*>(header) + 16);
  const std::size_t half = in.size() / 2;
  for (const auto part : {in.first(half), in.subspan(half)}) {
    const auto block = snappy_raw(part);
    unsigned char length[4];
    boost::endian::store_big_u32(length, static_cast<std::uint32_t>(block.size()));
    out.insert(out.end(), reinterpret_cast<const std::byte*>(length), reinterpret_cast<const std::byte*>(length) + 4);
    out.insert(out.end(), block.begin(), block.end());
  }
  return out;
}

std::vector<std::byte> lz4(std::span<const std::byte> in) {
  std::vector<std::byte> out(LZ4F_compressFrameBound(in.size(), nullptr));
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), nullptr);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

std::vector<std::byte> zstd(std::span<const std::byte> in) {
  std::vector<std::byte> out(ZSTD_compressBound(in.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// The plain batch with its records replaced by `payload` in `codec`, length and CRC fixed.
std::vector<std::byte> recoded(std::vector<std::byte> batch, std::span<const std::byte> payload, int codec) {
  batch.resize(model::batch_header_size);
  batch.insert(batch.end(), payload.begin(), payload.end());
  auto* raw = reinterpret_cast<unsigned char*>(batch.data());
  boost::endian::store_big_s32(raw + 8, static_cast<std::int32_t>(batch.size() - 12));
  boost::endian::store_big_s16(raw + 21, static_cast<std::int16_t>(codec));
  boost::endian::store_big_u32(raw + 17, bytes::crc32c(std::span(batch).subspan(21)));
  return batch;
}

void expect_lookups(const std::vector<std::byte>& batch) {
  const auto at = [&](std::int64_t ts) { return first_record_at_or_after(batch, ts); };
  ASSERT_TRUE(at(base_ts - 5));
  EXPECT_EQ(at(base_ts - 5)->found, offset{100});
  EXPECT_EQ(at(base_ts)->found, offset{100});
  EXPECT_EQ(at(base_ts + 1)->found, offset{101});
  EXPECT_EQ(at(base_ts + 1)->timestamp, base_ts + 10);
  EXPECT_EQ(at(base_ts + 200)->found, offset{120});  // shared by records 20 and 21: the first
  EXPECT_EQ(at(base_ts + 201)->found, offset{122});
  EXPECT_EQ(at(base_ts + 490)->found, offset{149});
  EXPECT_FALSE(at(base_ts + 491));
}

TEST(record_lookup, uncompressed) { expect_lookups(plain_batch()); }

TEST(record_lookup, every_codec) {
  const auto plain = plain_batch();
  const auto records = std::span(plain).subspan(model::batch_header_size);
  expect_lookups(recoded(plain, gzip(records), 1));
  expect_lookups(recoded(plain, snappy_raw(records), 2));
  expect_lookups(recoded(plain, snappy_xerial(records), 2));
  expect_lookups(recoded(plain, lz4(records), 3));
  expect_lookups(recoded(plain, zstd(records), 4));
}

TEST(record_lookup, log_append_time_answers_the_first_record) {
  auto batch = plain_batch();
  auto* raw = reinterpret_cast<unsigned char*>(batch.data());
  boost::endian::store_big_s16(raw + 21, 0x08);
  boost::endian::store_big_s64(raw + 35, base_ts + 1'000'000);
  const auto found = first_record_at_or_after(batch, base_ts + 5000);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->found, offset{100});
  EXPECT_EQ(found->timestamp, base_ts + 1'000'000);
}

TEST(record_lookup, unreadable_records_give_no_answer) {
  const auto plain = plain_batch();
  const auto records = std::span(plain).subspan(model::batch_header_size);
  for (const int codec : {1, 2, 3, 4}) {
    // Truncated compressed data, and bytes that are not compressed data at all.
    for (const auto& payload : {gzip(records), lz4(records), zstd(records), snappy_raw(records)}) {
      const auto cut = std::span(payload).first(payload.size() / 2);
      const auto found = first_record_at_or_after(recoded(plain, cut, codec), base_ts + 250);
      EXPECT_TRUE(!found || found->found == offset{125}) << codec;
    }
  }
  // Bytes that are no compressed data at all (snappy has no header that would tell).
  for (const int codec : {1, 3, 4})
    EXPECT_FALSE(first_record_at_or_after(recoded(plain, records.first(40), codec), base_ts + 250)) << codec;
  (void)first_record_at_or_after(recoded(plain, records.first(40), 2), base_ts + 250);
  // Uncompressed records cut short.
  EXPECT_FALSE(first_record_at_or_after(recoded(plain, records.first(records.size() / 2), 0), base_ts + 400));
  EXPECT_FALSE(first_record_at_or_after(std::span(plain).first(30), base_ts));
}

// ---- validate_records

constexpr std::size_t one_mib = 1024 * 1024;

std::error_code validation_error(std::span<const std::byte> batch, std::size_t limit = one_mib) {
  const auto checked = validate_records(batch, limit);
  return checked ? std::error_code{} : checked.error();
}

TEST(validate_records, accepts_client_batches_in_every_codec) {
  const auto plain = plain_batch();
  const auto records = std::span(plain).subspan(model::batch_header_size);
  for (const auto& batch :
       {plain, recoded(plain, gzip(records), 1), recoded(plain, snappy_raw(records), 2),
        recoded(plain, snappy_xerial(records), 2), recoded(plain, lz4(records), 3), recoded(plain, zstd(records), 4)}) {
    const auto checked = validate_records(batch, one_mib);
    ASSERT_TRUE(checked) << checked.error().message();
    EXPECT_EQ(checked.value().max_timestamp, base_ts + 490);
    EXPECT_EQ(checked.value().record_bytes, records.size());
  }
}

// Writes record fields by hand, so that each can be made wrong.
struct raw_records {
  std::vector<std::byte> bytes;
  raw_records& varint(std::int64_t v) {
    std::byte raw[bytes::max_varint_bytes];
    bytes.insert(bytes.end(), raw, raw + bytes::encode_varint(v, raw));
    return *this;
  }
  raw_records& raw(std::initializer_list<std::uint8_t> b) {
    for (const auto x : b) bytes.push_back(std::byte{x});
    return *this;
  }
  // One well-formed record: attributes, deltas, a 1-byte key and value, no headers.
  raw_records& record(std::int64_t offset_delta) {
    raw_records body;
    body.raw({0}).varint(0).varint(offset_delta).varint(1).raw({'k'}).varint(1).raw({'v'}).varint(0);
    varint(static_cast<std::int64_t>(body.bytes.size()));
    bytes.insert(bytes.end(), body.bytes.begin(), body.bytes.end());
    return *this;
  }
};

// A batch with these record bytes, claiming `count` records, with a valid CRC.
std::vector<std::byte> batch_of(const raw_records& records, std::int32_t count) {
  auto batch = recoded(plain_batch(), records.bytes, 0);
  auto* raw = reinterpret_cast<unsigned char*>(batch.data());
  boost::endian::store_big_s32(raw + 23, count - 1);
  boost::endian::store_big_s32(raw + 57, count);
  boost::endian::store_big_u32(raw + 17, bytes::crc32c(std::span(batch).subspan(21)));
  EXPECT_FALSE(validate_batch(batch, {.max_batch_bytes = one_mib, .from_client = false}));
  return batch;
}

// One record whose body is `body` exactly, with its length field set to the body's size plus `length_skew`.
raw_records single(const raw_records& body, std::int64_t length_skew = 0) {
  raw_records r;
  r.varint(static_cast<std::int64_t>(body.bytes.size()) + length_skew);
  r.bytes.insert(r.bytes.end(), body.bytes.begin(), body.bytes.end());
  return r;
}

TEST(validate_records, refuses_malformed_records) {
  const auto malformed = make_error_code(errc::malformed_record);
  auto header_body = [](std::int64_t key_length, std::int64_t value_length) {
    raw_records b;
    b.raw({0}).varint(0).varint(0).varint(-1).varint(-1).varint(1).varint(key_length);
    if (key_length > 0) b.raw({'h'});
    b.varint(value_length);
    return b;
  };
  EXPECT_FALSE(validation_error(batch_of(single(header_body(1, -1)), 1)));           // a null header value is fine
  EXPECT_EQ(validation_error(batch_of(single(header_body(-1, -1)), 1)), malformed);  // a null header key is not
  EXPECT_EQ(validation_error(batch_of(single(header_body(-3, 0)), 1)), malformed);

  raw_records body;
  body.raw({0}).varint(0).varint(0).varint(1).raw({'k'}).varint(1).raw({'v'}).varint(0);
  EXPECT_FALSE(validation_error(batch_of(single(body), 1)));
  EXPECT_EQ(validation_error(batch_of(single(body, +1), 1)), malformed);  // length says more than the fields
  EXPECT_EQ(validation_error(batch_of(single(body, -1), 1)), malformed);  // ... or less
  raw_records negative_length;
  negative_length.varint(-7).raw({0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(validation_error(batch_of(negative_length, 1)), malformed);

  raw_records negative_key;
  negative_key.raw({0}).varint(0).varint(0).varint(-5).varint(1).raw({'v'}).varint(0);
  EXPECT_EQ(validation_error(batch_of(single(negative_key), 1)), malformed);
  raw_records key_past_end;
  key_past_end.raw({0}).varint(0).varint(0).varint(1'000'000).raw({'k'});
  EXPECT_EQ(validation_error(batch_of(single(key_past_end), 1)), malformed);
  raw_records negative_headers;
  negative_headers.raw({0}).varint(0).varint(0).varint(-1).varint(-1).varint(-2);
  EXPECT_EQ(validation_error(batch_of(single(negative_headers), 1)), malformed);
  raw_records many_headers;  // two billion headers in a 9-byte record
  many_headers.raw({0}).varint(0).varint(0).varint(-1).varint(-1).varint(2'000'000'000);
  EXPECT_EQ(validation_error(batch_of(single(many_headers), 1)), malformed);
  raw_records long_varint;  // an offset delta in 6 bytes
  long_varint.raw({0}).varint(0).raw({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}).varint(-1).varint(-1).varint(0);
  EXPECT_EQ(validation_error(batch_of(single(long_varint), 1)), malformed);
}

TEST(validate_records, refuses_wrong_counts_and_offsets) {
  raw_records two;
  two.record(0).record(1);
  EXPECT_FALSE(validation_error(batch_of(two, 2)));
  EXPECT_EQ(validation_error(batch_of(two, 1)), make_error_code(errc::record_count_mismatch));  // one left over
  EXPECT_EQ(validation_error(batch_of(two, 3)), make_error_code(errc::malformed_record));       // one missing
  // A 70-byte batch that claims 2^31-1 records would move the log end by that much.
  raw_records one;
  one.record(0);
  EXPECT_EQ(validation_error(batch_of(one, INT32_MAX)), make_error_code(errc::malformed_record));
  raw_records gap;
  gap.record(0).record(2);
  EXPECT_EQ(validation_error(batch_of(gap, 2)), make_error_code(errc::record_offsets_not_sequential));
  auto trailing = two;
  trailing.raw({0});
  EXPECT_EQ(validation_error(batch_of(trailing, 2)), make_error_code(errc::record_count_mismatch));
}

TEST(validate_records, refuses_corrupt_compressed_payloads) {
  const auto plain = plain_batch();
  const auto records = std::span(plain).subspan(model::batch_header_size);
  const auto corrupt = make_error_code(errc::corrupt_compressed_records);
  for (const auto& [codec, payload] : std::vector<std::pair<int, std::vector<std::byte>>>{
           {1, gzip(records)}, {3, lz4(records)}, {4, zstd(records)}, {2, snappy_xerial(records)}}) {
    const auto cut = std::span(payload).first(payload.size() - 3);
    EXPECT_EQ(validation_error(recoded(plain, cut, codec)), corrupt) << codec;
    auto extra = payload;
    extra.push_back(std::byte{0x55});  // bytes after the stream's end
    EXPECT_TRUE(validation_error(recoded(plain, extra, codec))) << codec;
  }
  EXPECT_EQ(validation_error(recoded(plain, records.first(40), 4)), corrupt);
}

// Peak resident memory of this process, in bytes.
std::int64_t peak_rss() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024;
}

TEST(validate_records, a_decompression_bomb_costs_bounded_memory_and_is_refused) {
  // 1 GiB of zeros as one record's value, compressed in slices so the test itself stays small.
  constexpr std::size_t inflated = std::size_t{1} << 30;
  const std::vector<std::byte> zeros(one_mib);
  std::vector<std::byte> gz;
  {
    z_stream zs{};
    ASSERT_EQ(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    raw_records prefix;  // a record header announcing the value
    prefix.varint(INT32_MAX).raw({0}).varint(0).varint(0).varint(-1).varint(INT32_MAX);
    std::vector<std::byte> chunk(one_mib);
    for (std::size_t i = 0; i <= inflated / one_mib; ++i) {
      const auto in = i == 0 ? std::span<const std::byte>(prefix.bytes) : std::span<const std::byte>(zeros);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
      zs.avail_in = static_cast<uInt>(in.size());
      do {
        zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
        zs.avail_out = static_cast<uInt>(chunk.size());
        deflate(&zs, i == inflated / one_mib ? Z_FINISH : Z_NO_FLUSH);
        gz.insert(gz.end(), chunk.begin(), chunk.end() - zs.avail_out);
      } while (zs.avail_out == 0);
    }
    deflateEnd(&zs);
  }
  std::vector<std::byte> zs_bomb;
  {
    raw_records big;  // one record announcing a 16 MiB value of zeros: zstd frames it small
    big.varint(INT32_MAX).raw({0}).varint(0).varint(0).varint(-1).varint(16 * one_mib);
    big.bytes.resize(big.bytes.size() + 16 * one_mib);
    zs_bomb.resize(ZSTD_compressBound(big.bytes.size()));
    zs_bomb.resize(ZSTD_compress(zs_bomb.data(), zs_bomb.size(), big.bytes.data(), big.bytes.size(), 1));
  }
  const auto plain = plain_batch();
  const std::int64_t before = peak_rss();
  EXPECT_EQ(validation_error(recoded(plain, gz, 1)), make_error_code(errc::records_too_large));
  EXPECT_EQ(validation_error(recoded(plain, zs_bomb, 4)), make_error_code(errc::records_too_large));
  EXPECT_LT(peak_rss() - before, std::int64_t{64} * 1024 * 1024);
}

TEST(validate_records, a_snappy_block_declaring_too_much_is_refused_before_it_is_decompressed) {
  const auto plain = plain_batch();
  // A raw snappy block whose preamble says 1 GiB.
  std::vector<std::byte> block;
  std::byte preamble[bytes::max_varint_bytes];
  block.insert(block.end(), preamble, preamble + bytes::encode_uvarint(std::uint64_t{1} << 30, preamble));
  block.resize(block.size() + 16, std::byte{0});
  EXPECT_EQ(validation_error(recoded(plain, block, 2)), make_error_code(errc::records_too_large));
}

// ---- batch_builder and compress

TEST(batch_builder, writes_batches_clients_read_in_every_codec) {
  for (const auto codec :
       {compression::none, compression::gzip, compression::snappy, compression::lz4, compression::zstd}) {
    batch_builder builder({.codec = codec, .producer = producer_id{7}, .epoch = producer_epoch{1}, .base_sequence = 4});
    const std::string value(300, 'x');
    const batch_builder::header headers[] = {{"trace", std::as_bytes(std::span(value.data(), 3))},
                                             {"empty", std::nullopt}};
    for (int i = 0; i < 20; ++i)
      builder.add(base_ts + 10 * i, std::nullopt, std::as_bytes(std::span(value.data(), value.size())), headers);
    const auto built = builder.finish();
    ASSERT_TRUE(built);
    const auto& batch = built.value();
    ASSERT_FALSE(validate_batch(batch, {.max_batch_bytes = one_mib, .from_client = true}));
    const batch_header_view header(batch);
    EXPECT_EQ(header.codec(), codec);
    EXPECT_EQ(header.records_count(), 20);
    EXPECT_EQ(header.max_timestamp(), base_ts + 190);
    EXPECT_EQ(header.base_sequence(), 4);
    const auto checked = validate_records(batch, one_mib);
    ASSERT_TRUE(checked) << checked.error().message();
    EXPECT_EQ(checked.value().max_timestamp, base_ts + 190);
    ASSERT_TRUE(first_record_at_or_after(batch, base_ts + 55));
    EXPECT_EQ(first_record_at_or_after(batch, base_ts + 55)->found, offset{6});

    std::vector<std::byte> records;
    ASSERT_TRUE(decompress_all(codec, std::span(batch).subspan(batch_header_size), one_mib, records));
    int seen = 0;
    ASSERT_TRUE(for_each_record(records, 20, [&](const record_view& r) {
      EXPECT_EQ(r.offset_delta, seen);
      EXPECT_FALSE(r.key);
      ASSERT_TRUE(r.value);
      EXPECT_EQ(r.value->size(), value.size());
      EXPECT_EQ(r.header_count, 2);
      ++seen;
    }));
    EXPECT_EQ(seen, 20);
  }
}

TEST(batch_builder, refuses_an_empty_batch) {
  EXPECT_EQ(batch_builder({}).finish().error(), make_error_code(errc::invalid_record_count));
}

TEST(decompress_all, stops_at_the_limit) {
  const std::vector<std::byte> raw(100'000, std::byte{'a'});
  for (const auto codec : {compression::gzip, compression::snappy, compression::lz4, compression::zstd}) {
    std::vector<std::byte> packed;
    ASSERT_TRUE(compress(codec, raw, packed));
    std::vector<std::byte> out;
    ASSERT_TRUE(decompress_all(codec, packed, raw.size(), out));
    EXPECT_EQ(out, raw);
    EXPECT_EQ(decompress_all(codec, packed, raw.size() - 1, out).error(), make_error_code(errc::records_too_large));
  }
}

}  // namespace
}  // namespace ferry::model
