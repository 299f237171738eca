#include "base/log.h"

#include <gtest/gtest.h>

namespace ferry::log {
namespace {

TEST(log, parses_levels) {
  level out{};
  EXPECT_TRUE(parse_level("warn", out));
  EXPECT_EQ(out, level::warn);
  EXPECT_FALSE(parse_level("loud", out));
}

TEST(log, skips_lines_below_the_level) {
  set_level(level::error);
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  FERRY_LOG(info, "test") << count();
  EXPECT_EQ(evaluated, 0);
  testing::internal::CaptureStderr();
  FERRY_LOG(error, "test") << "shown " << count();
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(evaluated, 1);
  EXPECT_NE(printed.find("ERROR test: shown 1"), std::string::npos);
  set_level(level::info);
}

}  // namespace
}  // namespace ferry::log
