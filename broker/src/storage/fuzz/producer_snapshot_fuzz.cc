// Decodes arbitrary bytes as a producer-state snapshot, as a log opening after a restart does with its
// "<offset>.snapshot" files. The harness also decodes a copy whose CRC it sets from the input, so that
// mutations reach the producer entries behind the CRC instead of all failing its check. Whatever decodes must
// serialize to a snapshot that decodes again to as many producers and batches, and take a batch of its first
// producer through check() and update().
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "model/record_batch.h"
#include "storage/producer_state.h"

namespace {

// Where the snapshot format (producer_state.h) puts the CRC, what it covers, and the first producer.
constexpr std::size_t crc_at = 2;
constexpr std::size_t crc_from = 6;
constexpr std::size_t first_producer_at = 10;
// Version 1 has no coordinator epoch and open transaction between a producer's epoch and its batch count.
constexpr std::size_t first_batch_at_v1 = first_producer_at + 11;
constexpr std::size_t first_batch_at_v2 = first_producer_at + 23;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ferry;
  using storage::producer_state_manager;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)producer_state_manager::deserialize(bytes);

  std::vector<std::byte> snapshot(bytes.begin(), bytes.end());
  auto* raw = reinterpret_cast<unsigned char*>(snapshot.data());
  if (snapshot.size() >= crc_from)
    boost::endian::store_big_u32(raw + crc_at, bytes::crc32c(std::span(snapshot).subspan(crc_from)));
  auto decoded = producer_state_manager::deserialize(snapshot);
  if (!decoded) return 0;
  producer_state_manager& state = decoded.value();

  const std::vector<std::byte> written = state.serialize();
  const auto again = producer_state_manager::deserialize(written);
  // Same producers and batches, so the same size (the order of the producers may differ).
  if (!again || again.value().serialize().size() != written.size()) __builtin_trap();

  const std::size_t first_batch_at = boost::endian::load_big_s16(raw) == 1 ? first_batch_at_v1 : first_batch_at_v2;
  if (snapshot.size() < first_batch_at + 32) return 0;  // no producers, or one without batches
  // The next batch of the first producer, in its epoch and right after its first retained batch's last sequence.
  const producer_id producer{boost::endian::load_big_s64(raw + first_producer_at)};
  const std::int16_t epoch = boost::endian::load_big_s16(raw + first_producer_at + 8);
  const std::int32_t last_sequence = boost::endian::load_big_s32(raw + first_batch_at + 4);
  if (!state.find(producer)) __builtin_trap();
  std::vector<std::byte> header(model::batch_header_size);
  auto* h = reinterpret_cast<unsigned char*>(header.data());
  boost::endian::store_big_s64(h + 0, 1000);                // base offset
  boost::endian::store_big_s32(h + 23, 1);                  // last offset delta: two records
  boost::endian::store_big_s64(h + 35, 1'700'000'000'000);  // max timestamp
  boost::endian::store_big_s64(h + 43, producer.value());
  boost::endian::store_big_s16(h + 51, epoch);
  boost::endian::store_big_s32(h + 53, last_sequence == INT32_MAX ? 0 : last_sequence + 1);
  const model::batch_header_view batch(header);
  if (const auto verdict = state.check(batch); verdict && !verdict.value()) state.update(batch);
  state.remove_before(offset{boost::endian::load_big_s64(raw + first_batch_at + 8)});
  (void)state.serialize();
  return 0;
}
