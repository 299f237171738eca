#include "storage/log_dir.h"

#include <cerrno>

#include "base/log.h"

namespace ferry::storage {

std::string log_dir_state::offline_reason() const {
  std::lock_guard lock(mutex_);
  return offline_reason_;
}

void log_dir_state::take_offline(const std::string& what, std::error_code ec) {
  {
    std::lock_guard lock(mutex_);
    if (offline_.load()) return;
    offline_reason_ = what + " failed: " + ec.message();
    offline_.store(true, std::memory_order_release);
  }
  FERRY_LOG(error, "storage") << "log dir " << path_.string() << " is offline: " << what << " failed (" << ec.message()
                              << "); its partitions refuse appends and reads until a restart";
  if (notify_offline_) notify_offline_();
}

void log_dir_state::note_no_space(const std::string& what) { set_full(true, what + " found no space left"); }

void log_dir_state::refresh_free_bytes(std::uint64_t free) {
  free_bytes_.store(free, std::memory_order_relaxed);
  if (free < full_below_bytes) {
    set_full(true, std::to_string(free) + " bytes are free");
  } else {
    set_full(false, std::to_string(free) + " bytes are free again");
  }
}

std::error_code log_dir_state::note_io_error(const std::string& what, std::error_code ec) {
  // Addresses, not operator!=: UBSan's vptr check cannot see the dynamic type of libstdc++'s categories.
  if (&ec.category() != &std::system_category() && &ec.category() != &std::generic_category()) return ec;
  if (ec.value() == ENOSPC || ec.value() == EDQUOT) {
    note_no_space(what);
  } else if (ec.value() == EIO || ec.value() == EROFS) {
    take_offline(what, ec);
  }
  return ec;
}

void log_dir_state::set_full(bool full, const std::string& why) {
  if (full_.exchange(full, std::memory_order_acq_rel) == full) return;
  if (full) {
    FERRY_LOG(error, "storage") << "log dir " << path_.string() << " is full (" << why
                                << "); appends to its partitions fail until space is freed";
  } else {
    FERRY_LOG(info, "storage") << "log dir " << path_.string() << " has space again (" << why << ")";
  }
}

}  // namespace ferry::storage
