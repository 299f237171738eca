#include "quota/rate_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ferry::quota {
namespace {

TEST(rate_sampler, a_steady_client_then_a_spike_as_in_kafkas_client_quota_manager_test) {
  // Kafka's ClientQuotaManagerTest.testQuotaViolation: 11 samples of 1 s, a bound of 500 bytes/s.
  rate_sampler rate;
  for (std::int64_t second = 0; second < 10; ++second) {
    rate.record(400, second * 1000);
    // One sample so far spans less than the 10 whole windows the rate is always taken over:
    // after the first record, 400 / 10 s = 40; after the tenth, 4000 / 10 s = 400.
    EXPECT_DOUBLE_EQ(rate.rate(second * 1000), 400.0 * static_cast<double>(second + 1) / 10.0);
  }
  // At 10.5 s, 2300 more: (10 × 400 + 2300) / 10.5 s = 6300 / 10.5 = 600 bytes/s, over 10500 ms since the
  // oldest sample (started at 0) began.
  rate.record(2300, 10'500);
  EXPECT_EQ(rate.elapsed_ms(10'500), 10'500);
  EXPECT_DOUBLE_EQ(rate.rate(10'500), 600.0);
  // (600 − 500) / 500 × 10500 ms = 2100 ms.
  EXPECT_EQ(throttle_time_ms(rate.rate(10'500), 500, rate.elapsed_ms(10'500)), 2100);
}

TEST(rate_sampler, a_new_client_is_measured_over_ten_whole_windows) {
  rate_sampler rate;
  // One record at 0: elapsed 0 ms, 0 whole windows, fewer than 11 − 1 = 10, so 10 × 1000 ms are added:
  // 6000 bytes / 10 s = 600 bytes/s; against 500: (600 − 500) / 500 × 10000 = 2000 ms.
  rate.record(6000, 0);
  EXPECT_EQ(rate.elapsed_ms(0), 10'000);
  EXPECT_DOUBLE_EQ(rate.rate(0), 600.0);
  EXPECT_EQ(throttle_time_ms(rate.rate(0), 500, rate.elapsed_ms(0)), 2000);
  // 2.5 s later: 2500 ms elapsed is 2 whole windows, 8 missing: 2500 + 8000 = 10500 ms; 6000 / 10.5 = 571.43.
  EXPECT_EQ(rate.elapsed_ms(2500), 10'500);
  EXPECT_NEAR(rate.rate(2500), 571.428571, 1e-6);
}

TEST(rate_sampler, a_single_sample_window_is_at_least_a_millisecond) {
  // quota.window.num=1: no whole windows are assumed; at the instant of the first record the elapsed time is 0,
  // taken as 1 ms: 5 / 0.001 s = 5000 per second.
  rate_sampler rate({1, 1000});
  rate.record(5, 42);
  EXPECT_EQ(rate.elapsed_ms(42), 1);
  EXPECT_DOUBLE_EQ(rate.rate(42), 5000.0);
  EXPECT_DOUBLE_EQ(rate.rate(542), 10.0);  // 5 / 0.5 s
}

TEST(rate_sampler, samples_without_an_event_for_the_whole_span_are_cleared) {
  rate_sampler rate;
  rate.record(1000, 0);
  // 11 samples × 1000 ms = 11000 ms: at 10999 the sample still counts, at 11000 it is cleared.
  EXPECT_DOUBLE_EQ(rate.total(10'999), 1000.0);
  EXPECT_DOUBLE_EQ(rate.total(11'000), 0.0);
  EXPECT_DOUBLE_EQ(rate.rate(11'000), 0.0);
}

TEST(rate_sampler, the_ring_keeps_the_samples_of_the_window) {
  rate_sampler rate;
  // 100 every second from 0 to 29 s. At 29 s the 12 slots hold samples started at 18..29 s; the one of 18 s
  // had its last event 11000 ms ago and is cleared: 11 × 100 = 1100 over 29000 − 19000 = 10000 ms = 110/s.
  for (std::int64_t second = 0; second < 30; ++second) rate.record(100, second * 1000);
  EXPECT_DOUBLE_EQ(rate.total(29'000), 1100.0);
  EXPECT_EQ(rate.elapsed_ms(29'000), 10'000);
  EXPECT_DOUBLE_EQ(rate.rate(29'000), 110.0);
}

TEST(rate_sampler, records_within_a_sample_add_up_and_a_sample_ends_after_its_span) {
  rate_sampler rate;
  rate.record(10, 0);
  rate.record(20, 999);    // same sample
  rate.record(30, 1000);   // a new one
  rate.record(-30, 1500);  // unrecorded, as Kafka does for a throttled fetch
  EXPECT_DOUBLE_EQ(rate.total(1500), 30.0);
}

TEST(rate_sampler, throttle_time_rounds_as_java_does) {
  // (600 − 500) / 500 × 10500 = 2100.
  EXPECT_EQ(throttle_time_ms(600, 500, 10'500), 2100);
  // (501 − 500) / 500 × 1250 = 2.5, rounded half up: 3.
  EXPECT_EQ(throttle_time_ms(501, 500, 1250), 3);
  // (500.4 − 500) / 500 × 1000 = 0.8 → 1; 0.2 → 0.
  EXPECT_EQ(throttle_time_ms(500.4, 500, 1000), 1);
  EXPECT_EQ(throttle_time_ms(500.1, 500, 1000), 0);
  // A zero bound: infinite, saturating; a NaN bound: Math.round(NaN) = 0.
  EXPECT_EQ(throttle_time_ms(1, 0, 1000), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(throttle_time_ms(1, std::nan(""), 1000), 0);
}

}  // namespace
}  // namespace ferry::quota
