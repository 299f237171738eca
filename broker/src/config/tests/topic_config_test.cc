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
  EXPECT_TRUE(apply_topic_override(s, "cleanup.policy", "compact"));
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
    } else {
      EXPECT_TRUE(e.is_default) << e.name;
    }
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace ferry::config
