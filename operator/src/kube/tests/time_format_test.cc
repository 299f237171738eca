#include "kube/time_format.h"

#include <gtest/gtest.h>

namespace ferry::kube {
namespace {

TEST(TimeFormat, RoundTripsTimeAndMicroTime) {
  const auto t = parse_time("2026-12-03T19:50:07Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(format_time(*t), "2026-12-03T19:50:07Z");
  const auto micro = parse_time("2026-12-03T19:50:07.123456Z");
  ASSERT_TRUE(micro);
  EXPECT_EQ(format_micro_time(*micro), "2026-12-03T19:50:07.123456Z");
  EXPECT_EQ(*micro - *t, std::chrono::microseconds(123456));
}

TEST(TimeFormat, RefusesMalformedTimes) {
  for (const char* bad : {"", "2026-12-03", "2026-12-03T19:50:07", "2026-13-03T19:50:07Z", "2026-12-03T19:50:07.Z",
                          "2026-12-03 19:50:07Z", "x026-12-03T19:50:07Z"}) {
    EXPECT_FALSE(parse_time(bad)) << bad;
  }
}

}  // namespace
}  // namespace ferry::kube
