#pragma once

#include <system_error>

namespace ferry::model {

// Why a record batch was refused. Each maps to one Kafka error code in server/error_mapping.cc.
enum class errc {
  batch_too_short = 1,   // shorter than the 61-byte v2 header, or its length field disagrees with the bytes
  unsupported_magic,     // not a v2 (magic 2) batch
  crc_mismatch,          // CRC-32C over attributes..end does not match
  invalid_record_count,  // a client's record count is not last_offset_delta + 1 (or is zero); a stored one exceeds it
  batch_too_large,       // larger than the topic's max.message.bytes
  control_batch_from_client,
  invalid_producer_fields,  // producer id set without a base sequence, or the reverse
  nonzero_base_offset,      // clients must send base offset 0
  unsupported_compression,  // codec bits 5..7
  offset_overflow,          // base offset + last_offset_delta + 1 exceeds INT64_MAX (only a damaged stored batch)
  // The records inside an intact batch (model/records.h):
  malformed_record,               // a record's length, varints or fields do not parse, or leave bytes over
  record_count_mismatch,          // the records are more or fewer than the header's record count
  record_offsets_not_sequential,  // offset deltas other than 0, 1, 2, ... (clients always number them so)
  corrupt_compressed_records,     // the payload is not a whole, valid stream of its codec
  records_too_large,              // the records decompress to more than max.message.bytes
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::model

template <>
struct std::is_error_code_enum<ferry::model::errc> : std::true_type {};
