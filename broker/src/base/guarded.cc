#include "base/guarded.h"

#include <typeinfo>

#include "base/log.h"

namespace ferry {
namespace {

std::atomic<std::uint64_t> failures{0};

}  // namespace

std::uint64_t confined_failures() { return failures.load(std::memory_order_relaxed); }

void report_confined_failure(std::string_view context, const std::exception_ptr& failure) noexcept {
  failures.fetch_add(1, std::memory_order_relaxed);
  try {
    std::string what = "an exception that is not a std::exception";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what = std::string(typeid(e).name()) + ": " + e.what();
    } catch (...) {  // NOLINT(bugprone-empty-catch): described above
    }
    FERRY_LOG_LIMITED(error, "guard", 10000) << context << " failed and was confined: " << what;
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging itself failed (out of memory); the count stands
  }
}

}  // namespace ferry
