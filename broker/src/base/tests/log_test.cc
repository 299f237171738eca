#include "base/log.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include <nlohmann/json.hpp>

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

TEST(log, json_lines_are_one_object_each) {
  format out{};
  EXPECT_TRUE(parse_format("json", out));
  EXPECT_FALSE(parse_format("xml", out));
  set_format(format::json);
  testing::internal::CaptureStderr();
  FERRY_LOG(warn, "test") << "a \"quoted\" " << std::string("\xff") << " byte";
  const std::string printed = testing::internal::GetCapturedStderr();
  set_format(format::text);
  ASSERT_EQ(printed.back(), '\n');
  const auto event = nlohmann::json::parse(printed);
  EXPECT_EQ(event["level"], "warn");
  EXPECT_EQ(event["component"], "test");
  EXPECT_EQ(event["message"], "a \"quoted\" \xEF\xBF\xBD byte") << "invalid UTF-8 replaced";
  EXPECT_EQ(event["time"].get<std::string>().size(), 24U);
}

// A call site that fires in a loop writes a few lines per interval, and the next one says how many it held back.
TEST(log, limited_lines_say_how_many_were_held_back) {
  testing::internal::CaptureStderr();
  for (int i = 0; i < 1000; ++i) FERRY_LOG_LIMITED(warn, "test", 60000) << "flood " << i;
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("WARN  test: flood 0\n"), std::string::npos);
  const auto last_let_through = "flood " + std::to_string(limiter::default_burst - 1) + "\n";
  EXPECT_NE(printed.find(last_let_through), std::string::npos);
  EXPECT_EQ(printed.find("flood " + std::to_string(limiter::default_burst) + "\n"), std::string::npos);
  EXPECT_EQ(printed.find("flood 999"), std::string::npos);

  limiter fast(std::chrono::milliseconds(1), 2);
  std::uint64_t held = 0;
  ASSERT_TRUE(fast.allow(held));
  ASSERT_TRUE(fast.allow(held));
  EXPECT_EQ(held, 0u);
  EXPECT_FALSE(fast.allow(held));
  EXPECT_FALSE(fast.allow(held));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the interval itself is what is tested
  ASSERT_TRUE(fast.allow(held));
  EXPECT_EQ(held, 2u);
}

}  // namespace
}  // namespace ferry::log
