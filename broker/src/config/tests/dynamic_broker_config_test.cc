#include "config/dynamic_broker_config.h"

#include <gtest/gtest.h>

namespace ferry::config {
namespace {

TEST(dynamic_broker_config, only_the_replication_throttles_change_at_run_time) {
  EXPECT_FALSE(check_dynamic_broker_setting("leader.replication.throttled.rate", "1000000"));
  EXPECT_FALSE(check_dynamic_broker_setting("follower.replication.throttled.rate", "0"));
  const auto static_one = check_dynamic_broker_setting("log.retention.ms", "1000");
  ASSERT_TRUE(static_one);
  EXPECT_NE(static_one->message.find("'log.retention.ms' cannot change while the broker runs"), std::string::npos);
  for (const auto* bad : {"-1", "fast", "1e6", ""}) {
    const auto refused = check_dynamic_broker_setting("leader.replication.throttled.rate", bad);
    ASSERT_TRUE(refused) << bad;
    EXPECT_NE(refused->message.find("bytes per second"), std::string::npos);
  }
}

TEST(dynamic_broker_config, a_rate_limits_unless_unset_or_the_default) {
  EXPECT_EQ(replication_throttle_rate(std::nullopt), std::nullopt);
  EXPECT_EQ(replication_throttle_rate("9223372036854775807"), std::nullopt);
  EXPECT_EQ(replication_throttle_rate("garbled"), std::nullopt);
  EXPECT_EQ(replication_throttle_rate("100000"), 100000);
  EXPECT_EQ(replication_throttle_rate("0"), 0);
}

}  // namespace
}  // namespace ferry::config
