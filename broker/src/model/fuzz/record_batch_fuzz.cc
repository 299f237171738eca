// Feeds arbitrary bytes to the record-batch validator, the record walker and the transaction marker reader, as a
// produce request, a replica fetch or a recovering log would. The harness sets the batch length and CRC from the input
// before validating, so that mutations reach the header checks and the records (plain and compressed) behind them
// instead of all failing the CRC check.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "model/compression.h"
#include "model/control_record.h"
#include "model/record_batch.h"
#include "model/records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)ferry::model::peek_batch_size(bytes);
  (void)ferry::model::validate_batch(bytes, {});

  std::vector<std::byte> batch(bytes.begin(), bytes.end());
  if (batch.size() >= ferry::model::batch_header_size) {
    auto* raw = reinterpret_cast<unsigned char*>(batch.data());
    boost::endian::store_big_s32(raw + 8, static_cast<std::int32_t>(batch.size() - ferry::model::batch_log_overhead));
    boost::endian::store_big_u32(raw + 17, ferry::bytes::crc32c(std::span(batch).subspan(21)));
  }
  constexpr std::size_t limit = 1 << 20;
  if (ferry::model::validate_batch(batch, {.max_batch_bytes = limit, .from_client = false})) return 0;
  const ferry::model::batch_header_view header(batch);
  (void)header.last_sequence();
  (void)header.last_offset();
  (void)ferry::model::validate_records(batch, limit);
  (void)ferry::model::first_record_at_or_after(batch, header.base_timestamp());
  if (header.is_control()) (void)ferry::model::read_marker(batch);
  std::vector<std::byte> records;
  if (ferry::model::decompress_all(header.codec(), std::span(batch).subspan(ferry::model::batch_header_size), limit,
                                   records))
    (void)ferry::model::for_each_record(records, header.records_count(), [](const ferry::model::record_view&) {});
  return 0;
}
