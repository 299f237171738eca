// Writes arbitrary bytes as the segment files of a partition directory (segment_files.h says how the input
// is split into .log, .index and .timeindex files of up to four segments) and opens the log as the broker
// does at startup: trusting the files (a clean shutdown), recovering all of them (a crash before any
// checkpoint), and recovering only the last segment (a crash after the recovery point reached it). Each
// opened log is read end to end, searched by timestamp, appended to and closed; whatever the files hold,
// nothing may crash or hang, reads must make progress and stay inside the files, and a log recovered from
// offset 0 must open cleanly afterwards at the same offsets.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "io/file_system.h"
#include "model/batch_builder.h"
#include "storage/fuzz/scratch_dir.h"
#include "storage/fuzz/segment_files.h"
#include "storage/log.h"

namespace ferry::storage {
namespace {

// Larger inputs only make each run slower: four segments of a few batches reach every path.
constexpr std::size_t max_input = std::size_t{64} * 1024;

struct open_mode {
  bool needs_recovery;
  // nullopt: the base offset of the last segment.
  std::optional<offset> recovery_point;
};

constexpr open_mode open_modes[] = {
    {false, offset{INT64_MAX}},
    {true, offset{0}},
    {true, std::nullopt},
};

log_config config() {
  log_config c;
  c.index_interval_bytes = 128;  // rebuilt indexes get entries even from small inputs
  c.segment_index_bytes = 1024;
  return c;
}

// A batch the log may take after it opened, as a producer's would be once validated.
const std::vector<std::byte>& client_batch() {
  static const std::vector<std::byte> batch = [] {
    model::batch_builder builder({});
    const std::byte value[] = {std::byte{'v'}};
    builder.add(1'700'000'000'000, std::nullopt, value);
    builder.add(1'700'000'000'001, std::nullopt, value);
    return builder.finish().value();
  }();
  return batch;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void read_everything(log& l) {
  const offset start = l.log_start_offset();
  const offset end = l.log_end_offset();
  check(start <= end);
  offset from = start;
  // Bounded: a log of 64 KiB has fewer batches than this, and each read returns at least one.
  for (int i = 0; i < 2048 && from < end; ++i) {
    const auto got = l.read(from, 4096, end);
    if (!got || got.value().slices.empty()) break;
    const read_result& r = got.value();
    // From the batch holding `from`, or past a gap that damage left: on, either way.
    check(r.next_offset > from && r.next_offset > r.first_offset);
    for (const file_slice& slice : r.slices) {
      const auto size = slice.file->size();
      check(size && slice.position + slice.length <= size.value());
    }
    from = r.next_offset;
  }
  (void)l.read(end, 4096, end);
  if (end.value() < INT64_MAX) check(!l.read(next(end), 4096, offset{INT64_MAX}));
  const auto newest = l.max_timestamp();
  for (const std::int64_t ts : {INT64_MIN, std::int64_t{-1}, std::int64_t{0}, std::int64_t{1'700'000'000'000}}) {
    (void)l.offset_for_timestamp(ts);
  }
  if (newest) {
    const auto found = l.offset_for_timestamp(newest->timestamp);
    (void)found;
    if (newest->timestamp < INT64_MAX) (void)l.offset_for_timestamp(newest->timestamp + 1);
  }
  (void)l.producer(producer_id{0});
}

void run(std::span<const std::uint8_t> input) {
  static fuzz::scratch_dir scratch("segment-recovery-fuzz");
  static const manual_clock clock;
  static const auto fs = io::posix_file_system();
  ferry::log::set_level(ferry::log::level::error);
  const auto segments = fuzz::unpack(input);

  for (const open_mode& mode : open_modes) {
    const auto directory = scratch.reset() / "orders-0";
    std::filesystem::create_directories(directory);
    const auto bases = fuzz::write_segments(segments, directory);
    const offset recovery_point = mode.recovery_point.value_or(bases.empty() ? offset{0} : bases.back());
    auto opened = open_log({.fs = fs,
                            .clock = &clock,
                            .directory = directory,
                            .config = config(),
                            .needs_recovery = mode.needs_recovery,
                            .recovery_point = recovery_point});
    if (!opened) continue;
    const std::shared_ptr<log> l = std::move(opened).value();
    read_everything(*l);
    std::vector<std::byte> batch = client_batch();
    if (const auto appended = l->append(batch, leader_epoch{1})) {
      const auto back = l->read(appended.value().base_offset, 4096, l->log_end_offset());
      check(back && !back.value().slices.empty());
    }
    if (!l->close()) continue;
    // Recovery from offset 0 checked every batch, so the log it leaves opens cleanly to the same offsets.
    const bool verified = mode.needs_recovery && recovery_point == offset{0};
    auto reopened = open_log({.fs = fs, .clock = &clock, .directory = directory, .config = config()});
    if (verified) {
      check(reopened.has_value());
      check(reopened.value()->log_start_offset() == l->log_start_offset());
      check(reopened.value()->log_end_offset() == l->log_end_offset());
    }
    if (reopened) read_everything(*reopened.value());
  }
}

}  // namespace
}  // namespace ferry::storage

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size <= ferry::storage::max_input) ferry::storage::run({data, size});
  return 0;
}
