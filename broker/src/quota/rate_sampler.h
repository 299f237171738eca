#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferry::quota {

// quota.window.num and quota.window.size.seconds (Kafka's defaults: 11 samples of 1 s, so 10 whole windows
// and the current one).
struct rate_window {
  int samples = 11;
  std::int64_t sample_ms = 1000;
};

// Kafka's quota rate: a Rate over a WindowedSum (SampledStat), sample for sample. Up to samples + 1 samples of
// sample_ms each are kept (one may straddle the start of the window); a sample with no event for samples ×
// sample_ms is cleared. The rate is the samples' total over the time elapsed since the oldest one started, and
// that time is never taken as less than samples − 1 whole windows (plus the current one's part), so a burst
// from a new client is spread over ten seconds rather than one.
//
// Time is passed in (any clock that does not go back), never read. Not thread-safe: its owner locks.
// Allocates only when built.
class rate_sampler {
 public:
  explicit rate_sampler(rate_window window = {});

  void record(double amount, std::int64_t now_ms);
  // Per second (Rate.measure). Clears expired samples, as Kafka does when it measures.
  [[nodiscard]] double rate(std::int64_t now_ms);
  // The time the rate is taken over, at least 1 ms (Rate.windowSize).
  [[nodiscard]] std::int64_t elapsed_ms(std::int64_t now_ms);
  // What the samples hold (WindowedSum.measure).
  [[nodiscard]] double total(std::int64_t now_ms);

 private:
  struct sample {
    double value = 0;
    std::int64_t start_ms = 0;
    std::int64_t last_event_ms = 0;

    void reset(std::int64_t now_ms) { *this = {0, now_ms, now_ms}; }
  };

  void purge_obsolete(std::int64_t now_ms);
  sample& current(std::int64_t now_ms);
  sample& advance(std::int64_t now_ms);

  rate_window window_;
  std::vector<sample> samples_;  // created as needed, up to window_.samples + 1, as Kafka's list
  std::size_t current_ = 0;
};

// How long to hold a client whose rate `observed` exceeds `bound`, so that the rate over the window stretched
// by the delay comes back to the bound (QuotaUtils.throttleTime): observed × W / (W + X) = bound, so
// X = (observed − bound) / bound × W, W being the rate's elapsed_ms. Rounded as Java's Math.round (half up,
// NaN as 0, saturating).
[[nodiscard]] std::int64_t throttle_time_ms(double observed, double bound, std::int64_t window_ms);

}  // namespace ferry::quota
