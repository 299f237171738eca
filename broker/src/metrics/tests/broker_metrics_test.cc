#include "metrics/broker_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace ferry::metrics {
namespace {

std::string exposition(const broker_metrics& m) {
  return prometheus::TextSerializer().Serialize(m.registry()->Collect());
}

TEST(broker_metrics, api_and_topic_series_appear_with_labels) {
  broker_metrics m;
  auto produce = m.for_api("produce");
  produce.requests->Increment();
  produce.latency->Observe(0.002);
  auto topic = m.for_topic("orders");
  topic.bytes_in->Increment(100);
  m.partition_log_size("orders", 3).Set(4096);
  const std::string text = exposition(m);
  EXPECT_NE(text.find("ferry_requests_total{api=\"produce\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_topic_bytes_in_total{topic=\"orders\"} 100"), std::string::npos);
  EXPECT_NE(text.find("ferry_partition_log_size_bytes{partition=\"3\",topic=\"orders\"} 4096"), std::string::npos);
  EXPECT_NE(text.find("ferry_request_duration_seconds_bucket{api=\"produce\",le=\"0.0025\"} 1"), std::string::npos);
}

TEST(broker_metrics, log_dir_sizes_and_broker_info_are_exported) {
  broker_metrics m;
  m.log_dir_free_bytes("/data").Set(1024);
  m.log_dir_total_bytes("/data").Set(4096);
  m.set_broker_info(2, "rack-a", "0.1.0");
  const std::string text = exposition(m);
  EXPECT_NE(text.find("ferry_log_dir_free_bytes{dir=\"/data\"} 1024"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_log_dir_total_bytes{dir=\"/data\"} 4096"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_broker_info{broker_id=\"2\",rack=\"rack-a\",version=\"0.1.0\"} 1"), std::string::npos)
      << text;
}

TEST(broker_metrics, forgotten_topics_leave_the_exposition) {
  broker_metrics m;
  m.for_topic("gone").records_in->Increment();
  m.partition_log_size("gone", 0).Set(1);
  m.forget_topic("gone");
  m.forget_partition("gone", 0);
  EXPECT_EQ(exposition(m).find("gone"), std::string::npos);
}

// Follower lag series are those of the partitions led at the last scrape: a leadership that moved away takes
// its series with it.
TEST(broker_metrics, follower_lag_series_are_replaced_whole) {
  broker_metrics m;
  m.replication().set_follower_lags({{"orders", 0, 2, 15, 1500}, {"orders", 0, 3, 0, 0}});
  std::string text = exposition(m);
  EXPECT_NE(text.find("ferry_partition_follower_lag_records{follower=\"2\",partition=\"0\",topic=\"orders\"} 15"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ferry_partition_follower_lag_bytes{follower=\"2\",partition=\"0\",topic=\"orders\"} 1500"),
            std::string::npos)
      << text;
  m.replication().set_follower_lags({{"orders", 0, 3, 4}});
  text = exposition(m);
  EXPECT_EQ(text.find("follower=\"2\""), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_partition_follower_lag_records{follower=\"3\",partition=\"0\",topic=\"orders\"} 4"),
            std::string::npos)
      << text;
  m.replication().set_follower_lags({});
  EXPECT_EQ(exposition(m).find("ferry_partition_follower_lag_records{"), std::string::npos);
  EXPECT_EQ(exposition(m).find("ferry_partition_follower_lag_bytes{"), std::string::npos);
}

}  // namespace
}  // namespace ferry::metrics
