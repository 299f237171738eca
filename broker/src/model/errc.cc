#include "model/errc.h"

#include "base/error_category.h"

namespace ferry::model {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::batch_too_short:
      return "record batch is truncated or its length field is wrong";
    case errc::unsupported_magic:
      return "only record batch format v2 (magic 2) is supported";
    case errc::crc_mismatch:
      return "record batch CRC-32C does not match its contents";
    case errc::invalid_record_count:
      return "record count does not match last offset delta";
    case errc::batch_too_large:
      return "record batch is larger than max.message.bytes";
    case errc::control_batch_from_client:
      return "clients may not produce control batches";
    case errc::invalid_producer_fields:
      return "producer id and base sequence are inconsistent";
    case errc::nonzero_base_offset:
      return "produced batches must have base offset 0";
    case errc::unsupported_compression:
      return "unknown compression codec";
    case errc::offset_overflow:
      return "the batch's offsets, or the offset after them, do not fit in 64 bits";
    case errc::malformed_record:
      return "a record in the batch is malformed (lengths, varints or headers do not parse)";
    case errc::record_count_mismatch:
      return "the batch holds a different number of records than its header says";
    case errc::record_offsets_not_sequential:
      return "the records' offset deltas are not 0, 1, 2, ...";
    case errc::corrupt_compressed_records:
      return "the batch's compressed records do not decompress";
    case errc::records_too_large:
      return "the batch's records decompress to more than max.message.bytes";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("model", describe);
  return instance;
}

}  // namespace ferry::model
