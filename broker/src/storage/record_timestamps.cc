#include "storage/record_timestamps.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "bytes/varint.h"
#include "model/record_batch.h"

namespace ferry::storage {
namespace {

using bytes_out = std::optional<std::vector<std::byte>>;

// Doubles `out` (up to max_record_bytes); false once it may not grow further.
bool grow(std::vector<std::byte>& out, std::size_t at_least) {
  if (out.size() >= max_record_bytes) return false;
  out.resize(std::min(max_record_bytes, std::max({out.size() * 2, at_least, std::size_t{4096}})));
  return true;
}

bytes_out gunzip(std::span<const std::byte> in) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return std::nullopt;  // 32: gzip or zlib header
  const std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  std::vector<std::byte> out;
  std::size_t produced = 0;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    if (produced == out.size() && !grow(out, in.size() * 4)) return std::nullopt;
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out.size() - produced);
    const int ret = inflate(&zs, Z_NO_FLUSH);
    produced = out.size() - zs.avail_out;
    if (ret == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      if (inflateReset(&zs) != Z_OK) return std::nullopt;  // another gzip member follows
      continue;
    }
    if (ret == Z_BUF_ERROR && zs.avail_out > 0) return std::nullopt;  // the input ends mid-stream
    if (ret != Z_OK && ret != Z_BUF_ERROR) return std::nullopt;
  }
  out.resize(produced);
  return out;
}

bool unsnappy_block(std::span<const std::byte> in, std::vector<std::byte>& out) {
  const char* src = reinterpret_cast<const char*>(in.data());
  std::size_t length = 0;
  if (snappy_uncompressed_length(src, in.size(), &length) != SNAPPY_OK) return false;
  if (length > max_record_bytes - out.size()) return false;
  const std::size_t at = out.size();
  out.resize(at + length);
  return snappy_uncompress(src, in.size(), reinterpret_cast<char*>(out.data() + at), &length) == SNAPPY_OK &&
         at + length == out.size();
}

// Raw snappy (librdkafka, Go clients) or snappy-java's xerial framing (the Java client): an 8-byte magic,
// two int32 versions, then [int32 length][raw snappy block] repeated.
bytes_out unsnappy(std::span<const std::byte> in) {
  static constexpr unsigned char xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
  std::vector<std::byte> out;
  if (in.size() >= 16 && std::memcmp(in.data(), xerial_magic, sizeof xerial_magic) == 0) {
    std::size_t at = 16;
    while (at < in.size()) {
      if (in.size() - at < 4) return std::nullopt;
      const auto length = boost::endian::load_big_u32(reinterpret_cast<const unsigned char*>(in.data() + at));
      at += 4;
      if (length > in.size() - at || !unsnappy_block(in.subspan(at, length), out)) return std::nullopt;
      at += length;
    }
    return out;
  }
  if (!unsnappy_block(in, out)) return std::nullopt;
  return out;
}

bytes_out unlz4(std::span<const std::byte> in) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) return std::nullopt;
  const std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> context(raw, LZ4F_freeDecompressionContext);
  std::vector<std::byte> out;
  std::size_t produced = 0;
  std::size_t consumed = 0;
  std::size_t hint = 1;
  while (consumed < in.size()) {
    if (produced == out.size() && !grow(out, in.size() * 4)) return std::nullopt;
    std::size_t dst = out.size() - produced;
    std::size_t src = in.size() - consumed;
    hint = LZ4F_decompress(context.get(), out.data() + produced, &dst, in.data() + consumed, &src, nullptr);
    if (LZ4F_isError(hint)) return std::nullopt;
    if (dst == 0 && src == 0 && produced < out.size()) return std::nullopt;  // no progress
    produced += dst;
    consumed += src;
  }
  // Input used up: the frame must be complete, with any output still buffered in the context drained.
  while (hint != 0) {
    if (produced == out.size() && !grow(out, in.size() * 4)) return std::nullopt;
    std::size_t dst = out.size() - produced;
    std::size_t src = 0;
    hint = LZ4F_decompress(context.get(), out.data() + produced, &dst, nullptr, &src, nullptr);
    if (LZ4F_isError(hint) || (dst == 0 && hint != 0)) return std::nullopt;
    produced += dst;
  }
  out.resize(produced);
  return out;
}

bytes_out unzstd(std::span<const std::byte> in) {
  const std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!context) return std::nullopt;
  std::vector<std::byte> out;
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  std::size_t produced = 0;
  std::size_t ret = 1;
  for (;;) {
    if (produced == out.size() && !grow(out, in.size() * 4)) return std::nullopt;
    ZSTD_outBuffer output{out.data(), out.size(), produced};
    ret = ZSTD_decompressStream(context.get(), &output, &input);
    if (ZSTD_isError(ret)) return std::nullopt;
    const bool progress = output.pos > produced;
    produced = output.pos;
    if (input.pos == input.size && (ret == 0 || (!progress && produced < out.size()))) break;
  }
  if (ret != 0) return std::nullopt;  // the input ends mid-frame
  out.resize(produced);
  return out;
}

// Reads Kafka's zigzag varints from record bytes.
class varint_reader {
 public:
  explicit varint_reader(std::span<const std::byte> in) : in_(in) {}

  bool varlong(std::int64_t& value) {
    std::uint64_t raw = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= in_.size()) return false;
      const auto b = static_cast<std::uint8_t>(in_[at_++]);
      raw |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        value = bytes::zigzag_decode(raw);
        return true;
      }
    }
    return false;
  }
  bool varint(std::int32_t& value) {
    std::int64_t wide = 0;
    if (!varlong(wide) || wide < INT32_MIN || wide > INT32_MAX) return false;
    value = static_cast<std::int32_t>(wide);
    return true;
  }
  bool skip(std::size_t n) {
    if (in_.size() - at_ < n) return false;
    at_ += n;
    return true;
  }
  [[nodiscard]] std::size_t position() const { return at_; }
  [[nodiscard]] std::size_t remaining() const { return in_.size() - at_; }

 private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

}  // namespace

std::optional<record_match> first_record_at_or_after(std::span<const std::byte> batch, std::int64_t ts) {
  if (batch.size() < model::batch_header_size) return std::nullopt;
  const model::batch_header_view header(batch);
  if (header.magic() != model::current_magic || header.max_timestamp() < ts) return std::nullopt;
  if (header.ts_type() == model::timestamp_type::log_append_time)
    return record_match{header.base_offset(), header.max_timestamp()};

  const auto payload = batch.subspan(model::batch_header_size);
  bytes_out decompressed;
  switch (header.codec()) {
    case model::compression::none:
      break;
    case model::compression::gzip:
      decompressed = gunzip(payload);
      break;
    case model::compression::snappy:
      decompressed = unsnappy(payload);
      break;
    case model::compression::lz4:
      decompressed = unlz4(payload);
      break;
    case model::compression::zstd:
      decompressed = unzstd(payload);
      break;
    default:
      return std::nullopt;
  }
  if (header.codec() != model::compression::none && !decompressed) return std::nullopt;
  const std::span<const std::byte> records = decompressed ? std::span<const std::byte>(*decompressed) : payload;

  varint_reader r(records);
  for (std::int32_t i = 0; i < header.records_count(); ++i) {
    std::int32_t length = 0;
    if (!r.varint(length) || length < 0 || static_cast<std::size_t>(length) > r.remaining()) return std::nullopt;
    const std::size_t end = r.position() + static_cast<std::size_t>(length);
    std::int64_t timestamp_delta = 0;
    std::int32_t offset_delta = 0;
    if (!r.skip(1) || !r.varlong(timestamp_delta) || !r.varint(offset_delta) || r.position() > end) return std::nullopt;
    const std::int64_t timestamp = wrapping_add(header.base_timestamp(), timestamp_delta);
    if (timestamp >= ts)
      return record_match{offset{wrapping_add(header.base_offset().value(), offset_delta)}, timestamp};
    if (!r.skip(end - r.position())) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace ferry::storage
