#include "quota/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ferry::quota {

void token_bucket::refill(double bound, std::int64_t now_ms) {
  const double burst = bound * window_.samples * (static_cast<double>(window_.sample_ms) / 1000.0);
  if (!started_) {
    started_ = true;
    tokens_ = burst;
  } else {
    tokens_ = std::min(burst, tokens_ + bound * static_cast<double>(now_ms - last_update_ms_) / 1000.0);
  }
  last_update_ms_ = now_ms;
}

void token_bucket::take(double amount, double bound, std::int64_t now_ms) {
  refill(bound, now_ms);
  tokens_ -= amount;
}

double token_bucket::tokens(double bound, std::int64_t now_ms) {
  refill(bound, now_ms);
  return tokens_;
}

std::int64_t debt_throttle_ms(double tokens, double bound) {
  if (!(tokens < 0)) return 0;
  const double ms = std::floor(-tokens / bound * 1000.0 + 0.5);  // Math.round
  if (std::isnan(ms) || ms >= static_cast<double>(std::numeric_limits<std::int64_t>::max()))
    return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(ms);
}

}  // namespace ferry::quota
