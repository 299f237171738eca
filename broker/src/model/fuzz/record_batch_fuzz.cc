// Feeds arbitrary bytes to the record-batch validator, as a produce request or a recovering log would.
#include <cstddef>
#include <cstdint>
#include <span>

#include "model/record_batch.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)ferry::model::peek_batch_size(bytes);
  (void)ferry::model::validate_batch(bytes, {});
  (void)ferry::model::validate_batch(bytes, {.max_batch_bytes = 1 << 20, .from_client = false});
  if (!ferry::model::validate_batch(bytes, {.from_client = false})) {
    const ferry::model::batch_header_view header(bytes);
    (void)header.last_sequence();
    (void)header.last_offset();
  }
  return 0;
}
