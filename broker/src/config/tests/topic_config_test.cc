#include "config/topic_config.h"

#include <gtest/gtest.h>

namespace ferry::config {
namespace {

TEST(topic_config, overrides_apply_over_defaults) {
  topic_settings defaults;
  topic_settings out;
  ASSERT_FALSE(resolve_topic_settings(defaults, {{"retention.ms", "1000"}, {"segment.bytes", "1048576"}}, out));
  EXPECT_EQ(out.retention_ms, 1000);
  EXPECT_EQ(out.segment_bytes, 1048576);
  EXPECT_EQ(out.max_message_bytes, defaults.max_message_bytes);
}

TEST(topic_config, bad_names_and_values_are_explained) {
  topic_settings s;
  auto e = apply_topic_override(s, "retention.mss", "1");
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("retention.mss"), std::string::npos);
  e = apply_topic_override(s, "segment.bytes", "ten");
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("segment.bytes"), std::string::npos);
  EXPECT_TRUE(apply_topic_override(s, "cleanup.policy", "compact,merge"));
  EXPECT_TRUE(apply_topic_override(s, "min.cleanable.dirty.ratio", "1.5"));
  EXPECT_TRUE(apply_topic_override(s, "message.timestamp.type", "Sometime"));
  EXPECT_FALSE(apply_topic_override(s, "message.timestamp.type", "LogAppendTime"));
}

TEST(topic_config, describe_marks_overrides) {
  const auto entries = describe_topic_settings({}, {{"retention.ms", "5"}});
  ASSERT_EQ(entries.size(), topic_config_names().size());
  bool seen = false;
  for (const auto& e : entries) {
    if (e.name == "retention.ms") {
      seen = true;
      EXPECT_EQ(e.value, "5");
      EXPECT_FALSE(e.is_default);
      EXPECT_EQ(e.default_value, "604800000");  // the broker's log.retention.ms still shows under the override
    } else {
      EXPECT_TRUE(e.is_default) << e.name;
      EXPECT_EQ(e.value, e.default_value) << e.name;
    }
  }
  EXPECT_TRUE(seen);
}

TEST(topic_config, describe_gives_kafka_types) {
  std::map<std::string, config_type> types;
  for (const auto& e : describe_topic_settings({}, {})) types[e.name] = e.type;
  EXPECT_EQ(types["retention.ms"], config_type::int64);
  EXPECT_EQ(types["segment.bytes"], config_type::int32);
  EXPECT_EQ(types["cleanup.policy"], config_type::list);
  EXPECT_EQ(types["compression.type"], config_type::string);
  EXPECT_EQ(types["unclean.leader.election.enable"], config_type::boolean);
  for (const auto& [name, type] : types) EXPECT_NE(type, config_type::unknown) << name;
}

TEST(topic_config, type_and_default_by_name) {
  topic_settings defaults;
  defaults.retention_ms = 1234;
  EXPECT_EQ(topic_config_type("cleanup.policy"), config_type::list);
  EXPECT_EQ(topic_config_type("max.message.bytes"), config_type::int32);
  EXPECT_EQ(topic_config_type("no.such.config"), std::nullopt);
  EXPECT_EQ(topic_config_default(defaults, "retention.ms"), "1234");
  EXPECT_EQ(topic_config_default(defaults, "cleanup.policy"), "delete");
  EXPECT_EQ(topic_config_default(defaults, "no.such.config"), std::nullopt);
}

// The log cleaner's topic settings (storage/log_cleaner.h).
TEST(topic_config, compaction_settings_are_honoured) {
  topic_settings s;
  ASSERT_FALSE(apply_topic_override(s, "cleanup.policy", "compact,delete"));
  EXPECT_EQ(s.cleanup_policy, "compact,delete");
  ASSERT_FALSE(apply_topic_override(s, "delete.retention.ms", "1000"));
  EXPECT_EQ(s.delete_retention_ms, 1000);
  ASSERT_FALSE(apply_topic_override(s, "min.cleanable.dirty.ratio", "0.25"));
  EXPECT_EQ(s.min_cleanable_dirty_ratio, 0.25);
  EXPECT_EQ(topic_config_default(s, "min.cleanable.dirty.ratio"), "0.25");
  ASSERT_FALSE(apply_topic_override(s, "min.compaction.lag.ms", "5000"));
  ASSERT_FALSE(apply_topic_override(s, "max.compaction.lag.ms", "60000"));
  EXPECT_EQ(s.max_compaction_lag_ms, 60000);
  EXPECT_TRUE(apply_topic_override(s, "max.compaction.lag.ms", "0"));
}

// What kafka-reassign-partitions --throttle writes: the replicas each side throttles, as partition:broker pairs.
TEST(topic_config, throttled_replicas_name_partitions_and_brokers) {
  topic_settings s;
  ASSERT_FALSE(apply_topic_override(s, "leader.replication.throttled.replicas", "0:0,0:1, 2:5"));
  EXPECT_TRUE(s.leader_replication_throttled_replicas.covers(0, 1));
  EXPECT_TRUE(s.leader_replication_throttled_replicas.covers(2, 5));
  EXPECT_FALSE(s.leader_replication_throttled_replicas.covers(1, 0));
  EXPECT_FALSE(s.follower_replication_throttled_replicas.covers(0, 0));  // nothing by default
  EXPECT_EQ(s.leader_replication_throttled_replicas.to_string(), "0:0,0:1,2:5");

  ASSERT_FALSE(apply_topic_override(s, "follower.replication.throttled.replicas", "*"));
  EXPECT_TRUE(s.follower_replication_throttled_replicas.covers(7, 3));
  EXPECT_EQ(s.follower_replication_throttled_replicas.to_string(), "*");

  ASSERT_FALSE(apply_topic_override(s, "leader.replication.throttled.replicas", ""));
  EXPECT_FALSE(s.leader_replication_throttled_replicas.covers(0, 0));

  for (const auto* bad : {"0", "0:", "a:1", "1:-2", "0:1,,", "*,0:1"}) {
    const auto refused = apply_topic_override(s, "leader.replication.throttled.replicas", bad);
    ASSERT_TRUE(refused) << bad;
    EXPECT_NE(refused->message.find("partition:broker"), std::string::npos) << refused->message;
  }
}

}  // namespace
}  // namespace ferry::config
