#include "storage/errc.h"

#include <string>

namespace ferry::storage {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "storage"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::offset_out_of_range:
        return "offset is outside the log";
      case errc::out_of_order_sequence:
        return "producer sequence number is out of order";
      case errc::invalid_producer_epoch:
        return "producer epoch is older than the current one";
      case errc::corrupt_log:
        return "log segment or index is corrupt";
      case errc::log_closed:
        return "log is closed";
    }
    return "unknown storage error";
  }
};

}  // namespace

const std::error_category& error_category() {
  static const category instance;
  return instance;
}

}  // namespace ferry::storage
