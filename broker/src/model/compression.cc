#include "model/compression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <boost/endian/conversion.hpp>

namespace ferry::model {
namespace {

// Codec contexts are costly to set up (zstd's and zlib's allocate their windows), so each thread keeps the
// ones it has used and resets them for the next payload instead of building new ones per batch.
template <typename Context>
class context_pool {
 public:
  static std::unique_ptr<Context> take() {
    auto& free = list();
    if (free.empty()) return std::make_unique<Context>();
    auto ctx = std::move(free.back());
    free.pop_back();
    return ctx;
  }
  static void give_back(std::unique_ptr<Context> ctx) {
    constexpr std::size_t kept = 4;
    if (ctx && ctx->ok() && list().size() < kept) list().push_back(std::move(ctx));
  }

 private:
  static std::vector<std::unique_ptr<Context>>& list() {
    thread_local std::vector<std::unique_ptr<Context>> free;
    return free;
  }
};

template <typename Context>
class pooled {
 public:
  pooled() : ctx_(context_pool<Context>::take()) {}
  ~pooled() { context_pool<Context>::give_back(std::move(ctx_)); }
  pooled(const pooled&) = delete;
  pooled& operator=(const pooled&) = delete;
  Context* operator->() const { return ctx_.get(); }

 private:
  std::unique_ptr<Context> ctx_;
};

// ---- gzip

struct inflate_context {
  z_stream stream{};
  bool initialised = inflateInit2(&stream, 15 + 32) == Z_OK;  // 32: a gzip or zlib header
  inflate_context() = default;
  inflate_context(const inflate_context&) = delete;
  inflate_context& operator=(const inflate_context&) = delete;
  ~inflate_context() {
    if (initialised) inflateEnd(&stream);
  }
  [[nodiscard]] bool ok() const { return initialised; }
};

class gzip_decompressor final : public decompressor {
 public:
  explicit gzip_decompressor(std::span<const std::byte> in) {
    if (!ctx_->ok() || inflateReset(&ctx_->stream) != Z_OK) failed_ = true;
    ctx_->stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    ctx_->stream.avail_in = static_cast<uInt>(in.size());
  }

  result<std::size_t> read(std::span<std::byte> out) override {
    if (failed_) return errc::corrupt_compressed_records;
    z_stream& zs = ctx_->stream;
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    while (zs.avail_out > 0 && !ended_) {
      const int ret = inflate(&zs, Z_NO_FLUSH);
      if (ret == Z_STREAM_END) {
        if (zs.avail_in == 0) {
          ended_ = true;
        } else if (inflateReset(&zs) != Z_OK) {  // another gzip member follows
          return fail();
        }
        continue;
      }
      if (ret == Z_BUF_ERROR && zs.avail_in == 0) return fail();  // the input ends mid-stream
      if (ret != Z_OK && ret != Z_BUF_ERROR) return fail();
    }
    return out.size() - zs.avail_out;
  }

 private:
  result<std::size_t> fail() {
    failed_ = true;
    return errc::corrupt_compressed_records;
  }
  pooled<inflate_context> ctx_;
  bool ended_ = false;
  bool failed_ = false;
};

// ---- snappy

class snappy_decompressor final : public decompressor {
 public:
  snappy_decompressor(std::span<const std::byte> in, std::size_t limit) : in_(in), limit_(limit) {
    static constexpr unsigned char xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    // Magic, then int32 version and int32 compatible version.
    constexpr std::size_t xerial_header = 16;
    framed_ = in.size() >= xerial_header && std::memcmp(in.data(), xerial_magic, sizeof xerial_magic) == 0;
    at_ = framed_ ? xerial_header : 0;
  }

  result<std::size_t> read(std::span<std::byte> out) override {
    std::size_t written = 0;
    while (written < out.size()) {
      if (block_at_ == block_.size()) {
        FERRY_TRY(const bool more, next_block());
        if (!more) break;
      }
      const std::size_t n = std::min(out.size() - written, block_.size() - block_at_);
      std::memcpy(out.data() + written, block_.data() + block_at_, n);
      block_at_ += n;
      written += n;
    }
    return written;
  }

 private:
  // Decompresses the next block into block_; false at the end.
  result<bool> next_block() {
    std::span<const std::byte> block;
    if (framed_) {
      if (at_ == in_.size()) return false;
      if (in_.size() - at_ < 4) return errc::corrupt_compressed_records;
      const auto length = boost::endian::load_big_u32(reinterpret_cast<const unsigned char*>(in_.data() + at_));
      at_ += 4;
      if (length > in_.size() - at_) return errc::corrupt_compressed_records;
      block = in_.subspan(at_, length);
      at_ += length;
    } else {
      if (at_ == in_.size()) return false;
      block = in_;
      at_ = in_.size();
    }
    const char* src = reinterpret_cast<const char*>(block.data());
    std::size_t length = 0;
    if (snappy_uncompressed_length(src, block.size(), &length) != SNAPPY_OK) return errc::corrupt_compressed_records;
    if (length > limit_ - std::min(limit_, produced_)) return errc::records_too_large;
    block_.resize(length);
    if (snappy_uncompress(src, block.size(), reinterpret_cast<char*>(block_.data()), &length) != SNAPPY_OK ||
        length != block_.size())
      return errc::corrupt_compressed_records;
    produced_ += length;
    block_at_ = 0;
    return true;
  }

  std::span<const std::byte> in_;
  std::size_t limit_;
  bool framed_ = false;
  std::size_t at_ = 0;
  std::vector<std::byte> block_;
  std::size_t block_at_ = 0;
  std::size_t produced_ = 0;
};

// ---- lz4

struct lz4_context {
  LZ4F_dctx* dctx = nullptr;
  bool created = !LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION));
  lz4_context() = default;
  lz4_context(const lz4_context&) = delete;
  lz4_context& operator=(const lz4_context&) = delete;
  ~lz4_context() {
    if (created) LZ4F_freeDecompressionContext(dctx);
  }
  [[nodiscard]] bool ok() const { return created; }
};

class lz4_decompressor final : public decompressor {
 public:
  explicit lz4_decompressor(std::span<const std::byte> in) : in_(in) {
    if (ctx_->ok()) LZ4F_resetDecompressionContext(ctx_->dctx);
  }

  result<std::size_t> read(std::span<std::byte> out) override {
    if (!ctx_->ok() || failed_) return errc::corrupt_compressed_records;
    std::size_t written = 0;
    while (written < out.size() && !ended_) {
      std::size_t dst = out.size() - written;
      std::size_t src = in_.size() - consumed_;
      const std::size_t hint =
          LZ4F_decompress(ctx_->dctx, out.data() + written, &dst, in_.data() + consumed_, &src, nullptr);
      if (LZ4F_isError(hint)) return fail();
      written += dst;
      consumed_ += src;
      if (hint == 0) {
        // A frame ended; the payload must end with it (Kafka writes one frame).
        if (consumed_ != in_.size()) return fail();
        ended_ = true;
      } else if (dst == 0 && src == 0) {
        return fail();  // the input ends inside the frame
      }
    }
    return written;
  }

 private:
  result<std::size_t> fail() {
    failed_ = true;
    return errc::corrupt_compressed_records;
  }
  std::span<const std::byte> in_;
  pooled<lz4_context> ctx_;
  std::size_t consumed_ = 0;
  bool ended_ = false;
  bool failed_ = false;
};

// ---- zstd

struct zstd_context {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  zstd_context() {
    if (dctx != nullptr) ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, max_zstd_window_log);
  }
  zstd_context(const zstd_context&) = delete;
  zstd_context& operator=(const zstd_context&) = delete;
  ~zstd_context() { ZSTD_freeDCtx(dctx); }
  [[nodiscard]] bool ok() const { return dctx != nullptr; }
};

class zstd_decompressor final : public decompressor {
 public:
  explicit zstd_decompressor(std::span<const std::byte> in) : input_{in.data(), in.size(), 0} {
    if (ctx_->ok()) ZSTD_DCtx_reset(ctx_->dctx, ZSTD_reset_session_only);
  }

  result<std::size_t> read(std::span<std::byte> out) override {
    if (!ctx_->ok() || failed_) return errc::corrupt_compressed_records;
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    while (output.pos < output.size && !ended_) {
      const std::size_t before_in = input_.pos;
      const std::size_t before_out = output.pos;
      const std::size_t ret = ZSTD_decompressStream(ctx_->dctx, &output, &input_);
      if (ZSTD_isError(ret)) return fail();
      if (ret == 0 && input_.pos == input_.size) {
        ended_ = true;  // every frame is complete and the input is used up
      } else if (input_.pos == before_in && output.pos == before_out) {
        return fail();  // no progress: the input ends inside a frame
      }
    }
    return output.pos;
  }

 private:
  result<std::size_t> fail() {
    failed_ = true;
    return errc::corrupt_compressed_records;
  }
  pooled<zstd_context> ctx_;
  ZSTD_inBuffer input_;
  bool ended_ = false;
  bool failed_ = false;
};

// ---- compression

struct zstd_compress_context {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  zstd_compress_context() = default;
  zstd_compress_context(const zstd_compress_context&) = delete;
  zstd_compress_context& operator=(const zstd_compress_context&) = delete;
  ~zstd_compress_context() { ZSTD_freeCCtx(cctx); }
  [[nodiscard]] bool ok() const { return cctx != nullptr; }
};

struct deflate_context {
  z_stream stream{};
  // 15 + 16: a gzip wrapper, as Kafka's GZIPOutputStream writes.
  bool initialised = deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  deflate_context() = default;
  deflate_context(const deflate_context&) = delete;
  deflate_context& operator=(const deflate_context&) = delete;
  ~deflate_context() {
    if (initialised) deflateEnd(&stream);
  }
  [[nodiscard]] bool ok() const { return initialised; }
};

result<void> deflate_gzip(std::span<const std::byte> raw, std::vector<std::byte>& out) {
  const pooled<deflate_context> ctx;
  if (!ctx->ok() || deflateReset(&ctx->stream) != Z_OK) return errc::corrupt_compressed_records;
  z_stream& zs = ctx->stream;
  const std::size_t start = out.size();
  out.resize(start + deflateBound(&zs, static_cast<uLong>(raw.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  zs.avail_out = static_cast<uInt>(out.size() - start);
  const int ret = deflate(&zs, Z_FINISH);
  const std::size_t produced = zs.total_out;
  if (ret != Z_STREAM_END) return errc::corrupt_compressed_records;
  out.resize(start + produced);
  return success();
}

void compress_snappy_xerial(std::span<const std::byte> raw, std::vector<std::byte>& out) {
  // snappy-java's framing, which every client reads: magic, version 1, compatible version 1, then blocks of
  // at most 32 KiB, each as an int32 length and one raw snappy block.
  static constexpr unsigned char header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  constexpr std::size_t block = std::size_t{32} * 1024;
  const auto* h = reinterpret_cast<const std::byte*>(header);
  out.insert(out.end(), h, h + sizeof header);
  for (std::size_t at = 0; at < raw.size(); at += block) {
    const std::size_t n = std::min(block, raw.size() - at);
    const std::size_t length_at = out.size();
    std::size_t length = snappy_max_compressed_length(n);
    out.resize(length_at + 4 + length);
    snappy_compress(reinterpret_cast<const char*>(raw.data() + at), n,
                    reinterpret_cast<char*>(out.data() + length_at + 4), &length);
    boost::endian::store_big_u32(reinterpret_cast<unsigned char*>(out.data() + length_at),
                                 static_cast<std::uint32_t>(length));
    out.resize(length_at + 4 + length);
  }
}

result<void> compress_lz4(std::span<const std::byte> raw, std::vector<std::byte>& out) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;  // Kafka's block size
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  const std::size_t start = out.size();
  out.resize(start + LZ4F_compressFrameBound(raw.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data() + start, out.size() - start, raw.data(), raw.size(), &prefs);
  if (LZ4F_isError(n)) return errc::corrupt_compressed_records;
  out.resize(start + n);
  return success();
}

result<void> compress_zstd(std::span<const std::byte> raw, std::vector<std::byte>& out) {
  constexpr int level = 3;  // zstd's default, as Kafka's
  const pooled<zstd_compress_context> ctx;
  if (!ctx->ok()) return errc::corrupt_compressed_records;
  const std::size_t start = out.size();
  out.resize(start + ZSTD_compressBound(raw.size()));
  const std::size_t n =
      ZSTD_compressCCtx(ctx->cctx, out.data() + start, out.size() - start, raw.data(), raw.size(), level);
  if (ZSTD_isError(n)) return errc::corrupt_compressed_records;
  out.resize(start + n);
  return success();
}

}  // namespace

result<std::unique_ptr<decompressor>> make_decompressor(compression codec, std::span<const std::byte> payload,
                                                        std::size_t limit) {
  switch (codec) {
    case compression::gzip:
      return std::unique_ptr<decompressor>(std::make_unique<gzip_decompressor>(payload));
    case compression::snappy:
      return std::unique_ptr<decompressor>(std::make_unique<snappy_decompressor>(payload, limit));
    case compression::lz4:
      return std::unique_ptr<decompressor>(std::make_unique<lz4_decompressor>(payload));
    case compression::zstd:
      return std::unique_ptr<decompressor>(std::make_unique<zstd_decompressor>(payload));
    case compression::none:
      break;
  }
  return errc::unsupported_compression;
}

result<void> decompress_all(compression codec, std::span<const std::byte> payload, std::size_t limit,
                            std::vector<std::byte>& out) {
  out.clear();
  if (codec == compression::none) {
    if (payload.size() > limit) return errc::records_too_large;
    out.assign(payload.begin(), payload.end());
    return success();
  }
  FERRY_TRY(auto source, make_decompressor(codec, payload, limit));
  std::size_t produced = 0;
  for (;;) {
    if (produced == out.size()) {
      if (out.size() > limit) return errc::records_too_large;
      // One byte past the limit tells a payload of exactly `limit` bytes from a larger one.
      out.resize(std::min(limit + 1, std::max<std::size_t>(out.size() * 2, 4 * payload.size() + 4096)));
    }
    FERRY_TRY(const std::size_t n, source->read(std::span(out).subspan(produced)));
    if (n == 0) break;
    produced += n;
  }
  if (produced > limit) return errc::records_too_large;
  out.resize(produced);
  return success();
}

result<void> compress(compression codec, std::span<const std::byte> raw, std::vector<std::byte>& out) {
  switch (codec) {
    case compression::none:
      out.insert(out.end(), raw.begin(), raw.end());
      return success();
    case compression::gzip:
      return deflate_gzip(raw, out);
    case compression::snappy:
      compress_snappy_xerial(raw, out);
      return success();
    case compression::lz4:
      return compress_lz4(raw, out);
    case compression::zstd:
      return compress_zstd(raw, out);
  }
  return errc::unsupported_compression;
}

}  // namespace ferry::model
