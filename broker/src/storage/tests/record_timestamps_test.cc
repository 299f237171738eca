// first_record_at_or_after finds the record a ListOffsets by timestamp answers with, in every codec.
#include "storage/record_timestamps.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "model/testing/batch_builder.h"

namespace ferry::storage {
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

TEST(record_timestamps, uncompressed) { expect_lookups(plain_batch()); }

TEST(record_timestamps, every_codec) {
  const auto plain = plain_batch();
  const auto records = std::span(plain).subspan(model::batch_header_size);
  expect_lookups(recoded(plain, gzip(records), 1));
  expect_lookups(recoded(plain, snappy_raw(records), 2));
  expect_lookups(recoded(plain, snappy_xerial(records), 2));
  expect_lookups(recoded(plain, lz4(records), 3));
  expect_lookups(recoded(plain, zstd(records), 4));
}

TEST(record_timestamps, log_append_time_answers_the_first_record) {
  auto batch = plain_batch();
  auto* raw = reinterpret_cast<unsigned char*>(batch.data());
  boost::endian::store_big_s16(raw + 21, 0x08);
  boost::endian::store_big_s64(raw + 35, base_ts + 1'000'000);
  const auto found = first_record_at_or_after(batch, base_ts + 5000);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->found, offset{100});
  EXPECT_EQ(found->timestamp, base_ts + 1'000'000);
}

TEST(record_timestamps, unreadable_records_give_no_answer) {
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

}  // namespace
}  // namespace ferry::storage
