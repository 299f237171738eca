#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "base/result.h"
#include "model/record_batch.h"

namespace ferry::model {

// The record payload codecs of RecordBatch v2, in the forms Kafka clients write and read:
//   gzip    RFC 1952 (one or more members; zlib-wrapped data is read too)
//   snappy  snappy-java's xerial framing (the Java client) or one raw snappy block (librdkafka, Go)
//   lz4     the LZ4 frame format
//   zstd    zstd frames
//
// Decompression streams, so memory stays bounded whatever the payload claims: a gzip, lz4 or zstd stream
// needs its codec's window (zstd windows are limited to max_zstd_window_log) and a snappy block is
// decompressed whole only after its declared size was checked against the caller's limit.

inline constexpr int max_zstd_window_log = 24;  // 16 MiB; producers size windows to their (smaller) batches

// Produces the decompressed bytes of one payload piece by piece.
class decompressor {
 public:
  virtual ~decompressor() = default;
  // Fills `out` as far as the stream goes; returns the bytes written, 0 once the stream has ended cleanly.
  // errc::corrupt_compressed_records when the payload is not a whole, valid stream of its codec, and
  // errc::records_too_large when a snappy block declares more than the limit.
  virtual result<std::size_t> read(std::span<std::byte> out) = 0;
};

// A decompressor over `payload` (which must outlive it), for a codec other than none. `limit` bounds what a
// snappy block may declare; callers enforce it on the total too.
[[nodiscard]] result<std::unique_ptr<decompressor>> make_decompressor(compression codec,
                                                                      std::span<const std::byte> payload,
                                                                      std::size_t limit);

// Decompresses a whole payload into `out` (replacing its contents); errc::records_too_large past `limit`.
result<void> decompress_all(compression codec, std::span<const std::byte> payload, std::size_t limit,
                            std::vector<std::byte>& out);

// Appends `raw` compressed with `codec` (none copies it) to `out`, at each codec's default level.
result<void> compress(compression codec, std::span<const std::byte> raw, std::vector<std::byte>& out);

}  // namespace ferry::model
