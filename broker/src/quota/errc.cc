#include "quota/errc.h"

#include "base/error_category.h"

namespace ferry::quota {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::invalid_request:
      return "invalid client quota request";
    case errc::unsupported_entity_type:
      return "unsupported client quota entity type";
    case errc::malformed_value:
      return "malformed client quota value";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("quota", describe);
  return instance;
}

}  // namespace ferry::quota
