#include "model/records.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "bytes/varint.h"
#include "model/compression.h"

namespace ferry::model {
namespace {

constexpr std::size_t varint_max_bytes = 5;    // int32
constexpr std::size_t varlong_max_bytes = 10;  // int64

std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// Record bytes that are in memory: the payload of an uncompressed batch, or decompressed bytes. Kept to
// pointers, with every step of the walk inlined, so the position stays in a register: each field's position
// depends on the one before, and keeping it in memory made the walk of 100-byte records twice as slow.
class span_source {
 public:
  static constexpr bool addressable = true;

  explicit span_source(std::span<const std::byte> in)
      : begin_(in.data()), at_(in.data()), end_(in.data() + in.size()) {}

  [[gnu::always_inline]] bool varint(std::int64_t& value, std::size_t max_bytes) {
    const std::size_t n = bytes::decode_varint({at_, end_}, value);
    if (n == 0 || n > max_bytes) return false;
    at_ += n;
    return true;
  }
  [[gnu::always_inline]] bool byte(std::int8_t& value) {
    if (at_ == end_) return false;
    value = static_cast<std::int8_t>(*at_++);
    return true;
  }
  [[gnu::always_inline]] bool skip(std::size_t n) {
    if (static_cast<std::size_t>(end_ - at_) < n) return false;
    at_ += n;
    return true;
  }
  [[nodiscard]] std::size_t consumed() const { return static_cast<std::size_t>(at_ - begin_); }
  [[nodiscard]] std::span<const std::byte> view(std::size_t from, std::size_t to) const {
    return {begin_ + from, to - from};
  }
  result<bool> at_end() { return at_ == end_; }
  [[nodiscard]] std::error_code error() const { return {}; }

 private:
  const std::byte* begin_;
  const std::byte* at_;
  const std::byte* end_;
};

// Record bytes read from a decompressor through a fixed window, never more than `limit` in all.
class stream_source {
 public:
  static constexpr bool addressable = false;
  static constexpr std::size_t window_bytes = std::size_t{64} * 1024;

  stream_source(decompressor& in, std::size_t limit) : in_(in), limit_(limit), window_(window()) {}

  bool varint(std::int64_t& value, std::size_t max_bytes) {
    std::uint64_t raw = 0;
    for (std::size_t i = 0; i < max_bytes; ++i) {
      std::int8_t b = 0;
      if (!byte(b)) return false;
      raw |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b) & 0x7F) << (7 * i);
      if ((static_cast<std::uint8_t>(b) & 0x80) == 0) {
        value = bytes::zigzag_decode(raw);
        return true;
      }
    }
    return false;
  }
  bool byte(std::int8_t& value) {
    if (begin_ == end_ && !refill()) return false;
    value = static_cast<std::int8_t>(window_[begin_++]);
    ++consumed_;
    return true;
  }
  bool skip(std::size_t n) {
    while (n > 0) {
      if (begin_ == end_ && !refill()) return false;
      const std::size_t take = std::min(n, end_ - begin_);
      begin_ += take;
      consumed_ += take;
      n -= take;
    }
    return true;
  }
  [[nodiscard]] std::size_t consumed() const { return consumed_; }
  [[nodiscard]] static std::span<const std::byte> view(std::size_t, std::size_t) { return {}; }
  result<bool> at_end() {
    if (begin_ != end_) return false;
    if (refill()) return false;
    if (error_) return error_;
    return true;
  }
  [[nodiscard]] std::error_code error() const { return error_; }

 private:
  // The window is per thread: validation never nests, and this spares an allocation per batch.
  static std::byte* window() {
    thread_local std::vector<std::byte> buffer(window_bytes);
    return buffer.data();
  }

  bool refill() {
    if (error_ || ended_) return false;
    auto got = in_.read({window_, window_bytes});
    if (!got) {
      error_ = got.error();
      return false;
    }
    if (got.value() == 0) {
      ended_ = true;
      return false;
    }
    produced_ += got.value();
    if (produced_ > limit_) {
      error_ = errc::records_too_large;
      return false;
    }
    begin_ = 0;
    end_ = got.value();
    return true;
  }

  decompressor& in_;
  std::size_t limit_;
  std::byte* window_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t consumed_ = 0;
  std::size_t produced_ = 0;
  bool ended_ = false;
  std::error_code error_;
};

template <typename Source>
[[gnu::always_inline]] inline bool length_field(Source& in, std::int64_t& length, std::int64_t min) {
  return in.varint(length, varint_max_bytes) && length >= min && length <= INT32_MAX;
}

// A key or value: its length (-1 for null), then that many bytes.
template <typename Source>
[[gnu::always_inline]] inline bool nullable_bytes(Source& in, std::optional<std::span<const std::byte>>& field) {
  std::int64_t size = 0;
  if (!length_field(in, size, -1)) return false;
  if (size < 0) {
    field.reset();
    return true;
  }
  const std::size_t at = in.consumed();
  if (!in.skip(static_cast<std::size_t>(size))) return false;
  field = in.view(at, at + static_cast<std::size_t>(size));
  return true;
}

// Which offset deltas a batch's records may have: 0, 1, 2, ... as producers write them, or, in a stored batch
// that compaction rewrote, increasing ones with gaps up to the batch's last offset delta.
struct delta_rule {
  bool gaps = false;
  std::int32_t last = 0;  // with gaps: the largest allowed
};

// Parses the record at the source's position, the index-th of its batch, whose previous record had offset delta
// `previous` (-1 for the first).
template <typename Source>
[[gnu::always_inline]] inline std::error_code parse_record(Source& in, std::int32_t index, std::int32_t previous,
                                                           delta_rule rule, record_view& out) {
  const std::size_t record_start = in.consumed();
  std::int64_t length = 0;
  if (!length_field(in, length, 0)) return errc::malformed_record;
  const std::size_t start = in.consumed();
  std::int64_t offset_delta = 0;
  if (!in.byte(out.attributes) || !in.varint(out.timestamp_delta, varlong_max_bytes) ||
      !in.varint(offset_delta, varint_max_bytes))
    return errc::malformed_record;
  if (rule.gaps ? offset_delta <= previous || offset_delta > rule.last : offset_delta != index)
    return errc::record_offsets_not_sequential;
  out.offset_delta = static_cast<std::int32_t>(offset_delta);
  if (!nullable_bytes(in, out.key) || !nullable_bytes(in, out.value)) return errc::malformed_record;
  std::int64_t headers = 0;
  if (!length_field(in, headers, 0)) return errc::malformed_record;
  const std::size_t headers_start = in.consumed();
  for (std::int64_t h = 0; h < headers; ++h) {
    std::int64_t key = 0;
    std::int64_t value = 0;
    if (!length_field(in, key, 0) || !in.skip(static_cast<std::size_t>(key)) || !length_field(in, value, -1) ||
        (value > 0 && !in.skip(static_cast<std::size_t>(value))))
      return errc::malformed_record;
    // Each header takes at least two bytes, so a count the record cannot hold fails before long loops.
    if (in.consumed() - start > static_cast<std::size_t>(length)) return errc::malformed_record;
  }
  out.header_count = static_cast<std::int32_t>(headers);
  out.headers = in.view(headers_start, in.consumed());
  if (in.consumed() - start != static_cast<std::size_t>(length)) return errc::malformed_record;
  out.raw = in.view(record_start, in.consumed());
  return {};
}

// Walks `count` records; fn(view) returns false to stop early. Checks that nothing follows the last record
// when the walk is not stopped.
template <typename Source, typename Fn>
std::error_code walk(Source& in, std::int32_t count, delta_rule rule, Fn&& fn) {
  record_view view;
  std::int32_t previous = -1;
  for (std::int32_t i = 0; i < count; ++i) {
    if (auto bad = parse_record(in, i, previous, rule, view)) return in.error() ? in.error() : bad;
    previous = view.offset_delta;
    if (!fn(view)) return {};
  }
  auto end = in.at_end();
  if (!end) return end.error();
  if (!end.value()) return errc::record_count_mismatch;
  return {};
}

// Runs walk() over the batch's payload, through a decompressor if the batch is compressed.
template <typename Fn>
std::error_code walk_batch(std::span<const std::byte> batch, std::size_t limit, delta_rule rule,
                           std::size_t& record_bytes, Fn&& fn) {
  const batch_header_view header(batch);
  const auto payload = batch.subspan(batch_header_size);
  if (header.codec() == compression::none) {
    if (payload.size() > limit) return errc::records_too_large;
    span_source in(payload);
    record_bytes = payload.size();
    return walk(in, header.records_count(), rule, fn);
  }
  auto source = make_decompressor(header.codec(), payload, limit);
  if (!source) return source.error();
  stream_source in(*source.value(), limit);
  auto outcome = walk(in, header.records_count(), rule, fn);
  record_bytes = in.consumed();
  return outcome;
}

}  // namespace

result<records_summary> validate_records(std::span<const std::byte> batch, std::size_t max_record_bytes) {
  const batch_header_view header(batch);
  records_summary summary;
  const std::int64_t base = header.base_timestamp();
  std::int64_t max_delta = INT64_MIN;
  if (auto bad = walk_batch(batch, max_record_bytes, {}, summary.record_bytes, [&](const record_view& r) {
        max_delta = std::max(max_delta, r.timestamp_delta);
        return true;
      }))
    return bad;
  summary.max_timestamp = wrapping_add(base, max_delta);
  return summary;
}

std::optional<record_match> first_record_at_or_after(std::span<const std::byte> batch, std::int64_t ts) {
  if (batch.size() < batch_header_size) return std::nullopt;
  const batch_header_view header(batch);
  if (header.magic() != current_magic || header.max_timestamp() < ts) return std::nullopt;
  if (header.ts_type() == timestamp_type::log_append_time)
    return record_match{header.base_offset(), header.max_timestamp()};
  std::optional<record_match> found;
  std::size_t record_bytes = 0;
  const delta_rule stored{true, header.last_offset_delta()};
  const auto bad = walk_batch(batch, max_lookup_record_bytes, stored, record_bytes, [&](const record_view& r) {
    const std::int64_t timestamp = wrapping_add(header.base_timestamp(), r.timestamp_delta);
    if (timestamp < ts) return true;
    found = record_match{offset{wrapping_add(header.base_offset().value(), r.offset_delta)}, timestamp};
    return false;
  });
  if (bad) return std::nullopt;
  return found;
}

result<void> for_each_record(std::span<const std::byte> records, std::int32_t count,
                             const std::function<void(const record_view&)>& fn) {
  span_source in(records);
  if (auto bad = walk(in, count, {}, [&](const record_view& r) {
        fn(r);
        return true;
      }))
    return bad;
  return success();
}

result<void> for_each_stored_record(std::span<const std::byte> batch, std::size_t max_record_bytes,
                                    std::vector<std::byte>& scratch,
                                    const std::function<bool(const record_view&)>& fn) {
  const batch_header_view header(batch);
  std::span<const std::byte> records = batch.subspan(batch_header_size);
  if (header.codec() != compression::none) {
    FERRY_TRY(decompress_all(header.codec(), records, max_record_bytes, scratch));
    records = scratch;
  }
  span_source in(records);
  if (auto bad = walk(in, header.records_count(), {true, header.last_offset_delta()}, fn)) return bad;
  return success();
}

}  // namespace ferry::model
