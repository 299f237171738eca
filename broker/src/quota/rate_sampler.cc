#include "quota/rate_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ferry::quota {

rate_sampler::rate_sampler(rate_window window) : window_(window) {
  // Kafka refuses settings below 1 (atLeast(1)); a broken value here must not divide by zero.
  window_.samples = std::max(window_.samples, 1);
  window_.sample_ms = std::max<std::int64_t>(window_.sample_ms, 1);
  samples_.reserve(static_cast<std::size_t>(window_.samples) + 1);
}

rate_sampler::sample& rate_sampler::current(std::int64_t now_ms) {
  if (samples_.empty()) samples_.push_back({0, now_ms, now_ms});
  return samples_[current_];
}

rate_sampler::sample& rate_sampler::advance(std::int64_t now_ms) {
  // One more than the window holds: the oldest may have started before the window and still overlap it.
  const std::size_t capacity = static_cast<std::size_t>(window_.samples) + 1;
  current_ = (current_ + 1) % capacity;
  if (current_ >= samples_.size()) {
    samples_.push_back({0, now_ms, now_ms});
  } else {
    samples_[current_].reset(now_ms);
  }
  return samples_[current_];
}

void rate_sampler::record(double amount, std::int64_t now_ms) {
  sample* s = &current(now_ms);
  if (now_ms - s->start_ms >= window_.sample_ms) s = &advance(now_ms);
  s->value += amount;
  s->last_event_ms = now_ms;
}

void rate_sampler::purge_obsolete(std::int64_t now_ms) {
  // A sample with an event inside the monitored span stays, even when it started before the span.
  const std::int64_t expire_age = window_.samples * window_.sample_ms;
  for (auto& s : samples_)
    if (now_ms - s.last_event_ms >= expire_age) s.reset(now_ms);
}

double rate_sampler::total(std::int64_t now_ms) {
  purge_obsolete(now_ms);
  double sum = 0;
  for (const auto& s : samples_) sum += s.value;
  return sum;
}

std::int64_t rate_sampler::elapsed_ms(std::int64_t now_ms) {
  purge_obsolete(now_ms);
  if (samples_.empty()) samples_.push_back({0, now_ms, now_ms});
  const auto oldest = std::min_element(samples_.begin(), samples_.end(),
                                       [](const sample& a, const sample& b) { return a.start_ms < b.start_ms; });
  std::int64_t elapsed = now_ms - oldest->start_ms;
  // With fewer whole windows than samples − 1, count the missing ones as if they had been there and empty.
  const std::int64_t whole_windows = elapsed / window_.sample_ms;
  const std::int64_t least_whole_windows = window_.samples - 1;
  if (whole_windows < least_whole_windows) elapsed += (least_whole_windows - whole_windows) * window_.sample_ms;
  return std::max<std::int64_t>(elapsed, 1);
}

double rate_sampler::rate(std::int64_t now_ms) {
  const double sum = total(now_ms);
  return sum / (static_cast<double>(elapsed_ms(now_ms)) / 1000.0);
}

std::int64_t throttle_time_ms(double observed, double bound, std::int64_t window_ms) {
  const double delay = (observed - bound) / bound * static_cast<double>(window_ms);
  if (std::isnan(delay)) return 0;
  // Math.round: floor(x + 0.5), clamped to the range of a long.
  const double rounded = std::floor(delay + 0.5);
  if (rounded >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  if (rounded <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(rounded);
}

}  // namespace ferry::quota
