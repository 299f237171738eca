#include "model/errc.h"

#include <string>

namespace ferry::model {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "model"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
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
    }
    return "unknown model error";
  }
};

}  // namespace

const std::error_category& error_category() {
  static const category instance;
  return instance;
}

}  // namespace ferry::model
