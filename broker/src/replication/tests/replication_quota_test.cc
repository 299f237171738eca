#include "replication/replication_quota.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

namespace ferry::replication {
namespace {

using std::chrono::milliseconds;

// A quota of 1000 bytes a second on a clock the test moves.
class ReplicationQuota : public ::testing::Test {
 protected:
  void SetUp() override { quota.set_limit(1000); }

  manual_clock clock;
  replication_quota quota{clock};
};

TEST_F(ReplicationQuota, WithoutALimitNothingIsExceeded) {
  quota.set_limit(std::nullopt);
  quota.record(1'000'000'000);
  EXPECT_TRUE(quota.admits());
}

TEST_F(ReplicationQuota, TheFirstBytesCountOverTenSeconds) {
  quota.record(10'000);  // 1000 B/s over the ten seconds a young quota assumes: at the limit, not over it
  EXPECT_TRUE(quota.admits());
  quota.record(1);
  EXPECT_FALSE(quota.admits());
}

TEST_F(ReplicationQuota, BytesOlderThanElevenSecondsAreForgotten) {
  quota.record(50'000);
  clock.advance(milliseconds(10'500));
  EXPECT_FALSE(quota.admits());
  clock.advance(milliseconds(1'000));
  EXPECT_TRUE(quota.admits());
}

TEST_F(ReplicationQuota, ASteadyRateAtTheLimitIsAdmittedAndABurstOnTopIsNot) {
  for (int second = 0; second < 30; ++second) {
    quota.record(1000);
    clock.advance(milliseconds(1000));
  }
  // The last ten seconds' windows hold 1000 bytes each: exactly the limit.
  EXPECT_TRUE(quota.admits());
  quota.record(1500);
  EXPECT_FALSE(quota.admits());
}

TEST_F(ReplicationQuota, ALimitCanBeLiftedAndChanged) {
  quota.set_limit(100);
  quota.record(5000);
  EXPECT_FALSE(quota.admits());
  quota.set_limit(std::nullopt);
  EXPECT_TRUE(quota.admits());
  quota.set_limit(1000);
  EXPECT_TRUE(quota.admits());
}

TEST(ReplicationQuotaMetrics, SkipsAndBytesAreCountedForItsSide) {
  prometheus::Registry registry;
  metrics::replication_metrics metrics(registry);
  manual_clock clock;
  replication_quota quota(clock, metrics.leader_throttle());
  quota.set_limit(100);
  quota.record(5000);
  EXPECT_FALSE(quota.admits());
  EXPECT_FALSE(quota.admits());
  EXPECT_EQ(metrics.leader_throttle().bytes->Value(), 5000);
  EXPECT_EQ(metrics.leader_throttle().skips->Value(), 2);
  EXPECT_EQ(metrics.follower_throttle().skips->Value(), 0);
}

}  // namespace
}  // namespace ferry::replication
