#include "replication/replication_quota.h"

#include <algorithm>

namespace ferry::replication {

void replication_quota::set_limit(std::optional<std::int64_t> bytes_per_second) {
  std::lock_guard lock(mutex_);
  limit_ = bytes_per_second;
}

double replication_quota::rate_locked(std::int64_t now_ms) const {
  const std::int64_t oldest_kept = now_ms - windows * window_ms;
  std::uint64_t total = 0;
  std::int64_t oldest_start = now_ms;
  for (const auto& w : windows_) {
    if (w.bytes == 0 || w.start_ms <= oldest_kept) continue;
    total += w.bytes;
    oldest_start = std::min(oldest_start, w.start_ms);
  }
  // As Kafka's Rate: the span runs from the oldest window kept, and is never taken as less than all windows
  // but the current one, so the first bytes do not read as a huge rate.
  const std::int64_t span_ms = std::max(now_ms - oldest_start, (windows - 1) * window_ms);
  return static_cast<double>(total) * 1000.0 / static_cast<double>(span_ms);
}

bool replication_quota::admits() {
  const std::int64_t now_ms = steady_ms(clock_.steady_now());
  {
    std::lock_guard lock(mutex_);
    if (!limit_ || rate_locked(now_ms) <= static_cast<double>(*limit_)) return true;
  }
  if (counters_.skips != nullptr) counters_.skips->Increment();
  return false;
}

void replication_quota::record(std::uint64_t bytes) {
  const std::int64_t now_ms = steady_ms(clock_.steady_now());
  const std::int64_t start_ms = now_ms - now_ms % window_ms;
  std::lock_guard lock(mutex_);
  auto& w = windows_[static_cast<std::size_t>((start_ms / window_ms) % windows)];
  if (w.start_ms != start_ms) w = {start_ms, 0};
  w.bytes += bytes;
  if (counters_.bytes != nullptr) counters_.bytes->Increment(static_cast<double>(bytes));
}

}  // namespace ferry::replication
