#include "storage/log_cleaner.h"

#include <algorithm>

#include "base/guarded.h"
#include "base/log.h"
#include "storage/key_offset_map.h"
#include "storage/log_manager.h"

namespace ferry::storage {

void log_cleaner::start() {
  if (!options_.config.enable) return;
  const auto threads = static_cast<std::size_t>(std::max(options_.config.threads, 1));
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

void log_cleaner::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void log_cleaner::run() {
  const auto threads = static_cast<std::size_t>(std::max(options_.config.threads, 1));
  key_offset_map map(static_cast<std::size_t>(options_.config.dedupe_buffer_size) / threads);
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    const auto cleaned = clean_once(map);
    if (cleaned && cleaned.value()) continue;
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(options_.config.backoff_ms), [&] { return stopping_; });
  }
}

std::optional<log_cleaner::choice> log_cleaner::choose() {
  std::lock_guard lock(mutex_);
  survey found;
  found.uncleanable_partitions = uncleanable_.size();
  std::optional<choice> best;
  std::optional<cleanable_state> best_state;
  for (const auto& tp : options_.logs->partitions()) {
    if (uncleanable_.contains(tp) || in_progress_.contains(tp)) continue;
    auto candidate = options_.logs->get(tp);
    if (!candidate) continue;
    const auto state = candidate->cleanable();
    if (!state) continue;
    const double ratio = state->dirty_ratio();
    found.max_dirty_ratio = std::max(found.max_dirty_ratio, ratio);
    if (!state->overdue && ratio < state->min_cleanable_dirty_ratio) continue;
    const bool better = !best_state || (state->overdue && !best_state->overdue) ||
                        (state->overdue == best_state->overdue && ratio > best_state->dirty_ratio());
    if (better) {
      best = choice{tp, std::move(candidate)};
      best_state = state;
    }
  }
  if (options_.on_survey) options_.on_survey(found);
  if (best) in_progress_.insert(best->partition);
  return best;
}

result<bool> log_cleaner::clean_once(key_offset_map& map) {
  auto picked = choose();
  if (!picked) return false;
  const auto threads = static_cast<std::size_t>(std::max(options_.config.threads, 1));
  const auto io_buffer = static_cast<std::size_t>(std::max(options_.config.io_buffer_size, 1)) / threads;
  const auto started = options_.clock->steady_now();
  // A pass that throws leaves the partition uncleanable, like one that fails (Kafka's logs-uncleanable).
  result<compaction_result> outcome = errc::corrupt_log;
  (void)run_guarded("cleaning a log", [&] { outcome = picked->chosen->compact(map, io_buffer); });
  const auto duration = options_.clock->steady_now() - started;
  {
    std::lock_guard lock(mutex_);
    in_progress_.erase(picked->partition);
    if (!outcome && outcome.error() != errc::log_closed) uncleanable_.insert(picked->partition);
  }
  if (!outcome) {
    // A log removed meanwhile is no failure; anything else leaves the partition uncleanable.
    if (outcome.error() == errc::log_closed) return false;
    FERRY_LOG(error, "storage") << "the log cleaner failed on " << picked->partition << ": "
                                << outcome.error().message() << "; the partition stays uncleanable until restart";
    return outcome.error();
  }
  const bool cleaned = outcome.value().segments_replaced > 0;
  if (cleaned && options_.on_pass) options_.on_pass({picked->partition, duration, outcome.value()});
  return cleaned;
}

}  // namespace ferry::storage
