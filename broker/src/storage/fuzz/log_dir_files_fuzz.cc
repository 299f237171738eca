// Feeds arbitrary bytes to the parsers of a log dir's small text files. An input starting with 'd' is a log
// dir: up to its first NUL byte the partition.metadata of a partition "orders-0", then up to the next NUL both
// offset checkpoint files (recovery-point-offset-checkpoint and replication-offset-checkpoint), then the
// partition's leader-epoch-checkpoint, and the harness opens the dir with storage::log_manager as a restarting
// broker does. An input starting with 'e' goes to decode_leader_epoch_checkpoint, one starting with 't' to
// txn_index::decode (a segment's .txnindex), any other input to decode_offset_checkpoint, and whatever decodes
// must encode to bytes that decode to the same entries.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <span>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "io/file_system.h"
#include "storage/fuzz/scratch_dir.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log_manager.h"
#include "storage/offset_checkpoint.h"
#include "storage/txn_index.h"

namespace ferry::storage {
namespace {

void open_log_dir(std::string_view input) {
  static fuzz::scratch_dir scratch("log-dir-files-fuzz");
  static const ferry::manual_clock clock;
  // The next NUL-separated part of the input.
  const auto part = [&input] {
    const auto nul = input.find('\0');
    const std::string_view out = input.substr(0, nul);
    input.remove_prefix(nul == std::string_view::npos ? input.size() : nul + 1);
    return out;
  };
  const std::string_view metadata = part();
  const std::string_view checkpoint = part();
  const std::string_view epochs = part();
  const auto& root = scratch.reset();
  std::filesystem::create_directories(root / "orders-0");
  std::ofstream(root / "orders-0" / "partition.metadata", std::ios::binary) << metadata;
  std::ofstream(root / "orders-0" / leader_epoch_checkpoint, std::ios::binary) << epochs;
  std::ofstream(root / recovery_point_checkpoint, std::ios::binary) << checkpoint;
  std::ofstream(root / high_watermark_checkpoint, std::ios::binary) << checkpoint;

  auto opened = log_manager::open({.fs = io::posix_file_system(), .clock = &clock, .log_dirs = {root}});
  if (!opened) return;
  log_manager& manager = *opened.value();
  const topic_partition tp{"orders", partition_id{0}};
  (void)manager.topic_id(tp);
  (void)manager.read_checkpoint(high_watermark_checkpoint);
  (void)manager.create(tp, log_config{}, "AAAAAAAAAAAAAAAAAAAAAA");
  (void)manager.shutdown();
}

void run(std::string_view input) {
  ferry::log::set_level(ferry::log::level::error);
  if (input.starts_with('d')) {
    open_log_dir(input.substr(1));
    return;
  }
  if (input.starts_with('e')) {
    const auto entries = decode_leader_epoch_checkpoint(input.substr(1));
    if (!entries) return;
    const auto again = decode_leader_epoch_checkpoint(encode_leader_epoch_checkpoint(entries.value()));
    if (!again || again.value() != entries.value()) __builtin_trap();
    return;
  }
  if (input.starts_with('t')) {
    const auto bytes = std::as_bytes(std::span(input.substr(1)));
    const auto entries = txn_index::decode(bytes);
    if (!entries) return;
    std::vector<std::byte> encoded;
    for (const auto& entry : entries.value()) {
      const auto one = txn_index::encode(entry);
      encoded.insert(encoded.end(), one.begin(), one.end());
    }
    // The whole entries, byte for byte; a torn one at the end is left out.
    if (!std::equal(encoded.begin(), encoded.end(), bytes.begin()) ||
        bytes.size() - encoded.size() >= txn_index::entry_size)
      __builtin_trap();
    return;
  }
  const auto decoded = decode_offset_checkpoint(input);
  if (!decoded) return;
  const auto again = decode_offset_checkpoint(encode_offset_checkpoint(decoded.value()));
  if (!again || again.value() != decoded.value()) __builtin_trap();
}

}  // namespace
}  // namespace ferry::storage

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ferry::storage::run({reinterpret_cast<const char*>(data), size});
  return 0;
}
