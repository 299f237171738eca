#pragma once

#include <cstdint>

#include "quota/rate_sampler.h"

namespace ferry::quota {

// Kafka's TokenBucket (KIP-599), the stat of controller_mutation_rate: a bucket of up to bound × samples ×
// sample seconds tokens, refilled at `bound` tokens a second, from which each mutation takes one token per
// partition. It may go into debt: the mutation that empties it is still made, and the debt is what throttles.
// It starts full, as Kafka's does (its first refill covers all the time since the epoch).
//
// Time is passed in (any clock that does not go back), never read. Not thread-safe: its owner locks.
class token_bucket {
 public:
  explicit token_bucket(rate_window window = {}) : window_(window) {}

  // Takes `amount` tokens at `bound` tokens a second.
  void take(double amount, double bound, std::int64_t now_ms);
  // The tokens left after a refill at `bound` (negative: in debt).
  [[nodiscard]] double tokens(double bound, std::int64_t now_ms);

 private:
  void refill(double bound, std::int64_t now_ms);

  rate_window window_;
  bool started_ = false;
  double tokens_ = 0;
  std::int64_t last_update_ms_ = 0;
};

// How long a client in debt waits for the bucket to be back at zero (ControllerMutationQuotaManager.throttleTimeMs:
// −tokens / bound seconds, rounded); 0 when not in debt.
[[nodiscard]] std::int64_t debt_throttle_ms(double tokens, double bound);

}  // namespace ferry::quota
