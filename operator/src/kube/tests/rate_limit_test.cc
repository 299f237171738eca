#include <gtest/gtest.h>

#include "kube/api_client.h"
#include "kube/event_recorder.h"

namespace ferry::kube {
namespace {

using namespace std::chrono_literals;

class fake_clock final : public clock_source {
 public:
  [[nodiscard]] time_point now() const override { return now_; }
  void advance(std::chrono::nanoseconds by) { now_ += by; }

 private:
  time_point now_{std::chrono::hours(1000)};
};

TEST(TokenBucket, ABurstGoesAtOnceThenRequestsWaitForQps) {
  fake_clock clock;
  token_bucket bucket(20, 50, clock);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(bucket.reserve(), 0ns) << i;
  // The next ones wait in line, one 20th of a second apart.
  EXPECT_EQ(bucket.reserve(), 50ms);
  EXPECT_EQ(bucket.reserve(), 100ms);
  EXPECT_EQ(bucket.reserve(), 150ms);
}

TEST(TokenBucket, TokensRefillAtQpsUpToTheBurst) {
  fake_clock clock;
  token_bucket bucket(10, 5, clock);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bucket.reserve(), 0ns);
  EXPECT_EQ(bucket.reserve(), 100ms);  // owes one token
  clock.advance(300ms);                // three refilled, one of them paid the debt
  EXPECT_EQ(bucket.reserve(), 0ns);
  EXPECT_EQ(bucket.reserve(), 0ns);
  EXPECT_EQ(bucket.reserve(), 100ms);
  clock.advance(1h);  // a long pause refills the burst, no more
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bucket.reserve(), 0ns);
  EXPECT_GT(bucket.reserve(), 0ns);
}

TEST(TokenBucket, ZeroQpsIsNoLimit) {
  fake_clock clock;
  token_bucket bucket(0, 1, clock);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(bucket.reserve(), 0ns);
}

TEST(EventCorrelator, AnEqualEventWithinTheWindowIsFoldedAndCountedInTheNextPost) {
  fake_clock clock;
  event_correlator correlator(10min, 10, 100, clock);
  EXPECT_TRUE(correlator.observe("uid-1", "Warning", "PartitionsOffline", "2 offline").post);
  for (int i = 0; i < 5; ++i) {
    clock.advance(1min);
    EXPECT_FALSE(correlator.observe("uid-1", "Warning", "PartitionsOffline", "2 offline").post);
  }
  // Another object, reason or type is its own Event.
  EXPECT_TRUE(correlator.observe("uid-2", "Warning", "PartitionsOffline", "2 offline").post);
  EXPECT_TRUE(correlator.observe("uid-1", "Warning", "InvalidConfig", "2 offline").post);
  EXPECT_TRUE(correlator.observe("uid-1", "Normal", "PartitionsOffline", "2 offline").post);
  clock.advance(5min);  // 10 minutes after the first post
  const auto again = correlator.observe("uid-1", "Warning", "PartitionsOffline", "2 offline");
  EXPECT_TRUE(again.post);
  EXPECT_EQ(again.folded, 5U);
  EXPECT_FALSE(correlator.observe("uid-1", "Warning", "PartitionsOffline", "2 offline").post);
}

TEST(EventCorrelator, SimilarEventsWithChangingNotesAreLimitedPerWindow) {
  fake_clock clock;
  event_correlator correlator(10min, 3, 100, clock);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(correlator.observe("uid-1", "Warning", "Lagging", "lag " + std::to_string(i)).post) << i;
  }
  for (int i = 3; i < 10; ++i) {
    EXPECT_FALSE(correlator.observe("uid-1", "Warning", "Lagging", "lag " + std::to_string(i)).post) << i;
  }
  clock.advance(10min);
  const auto next = correlator.observe("uid-1", "Warning", "Lagging", "lag 10");
  EXPECT_TRUE(next.post);
  EXPECT_EQ(next.folded, 7U);
}

TEST(EventCorrelator, MemoryIsBoundedAndTheLeastRecentlySeenAreForgotten) {
  fake_clock clock;
  event_correlator correlator(10min, 10, 50, clock);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(correlator.observe("uid-" + std::to_string(i), "Warning", "Failed", "x").post);
    EXPECT_LE(correlator.size(), 50U);
  }
  // The most recent ones are remembered, the oldest forgotten (and so posted again).
  EXPECT_FALSE(correlator.observe("uid-999", "Warning", "Failed", "x").post);
  EXPECT_TRUE(correlator.observe("uid-0", "Warning", "Failed", "x").post);
}

}  // namespace
}  // namespace ferry::kube
