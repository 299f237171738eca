#include "base/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <utility>

namespace ferry::log {
namespace {

std::atomic<level> lowest_level{level::info};

const char* level_name(level lvl) {
  switch (lvl) {
    case level::debug:
      return "DEBUG";
    case level::info:
      return "INFO ";
    case level::warn:
      return "WARN ";
    case level::error:
      return "ERROR";
  }
  return "?";
}

}  // namespace

void set_level(level lowest) { lowest_level.store(lowest, std::memory_order_relaxed); }

level current_level() { return lowest_level.load(std::memory_order_relaxed); }

bool parse_level(std::string_view text, level& out) {
  if (text == "debug")
    out = level::debug;
  else if (text == "info")
    out = level::info;
  else if (text == "warn")
    out = level::warn;
  else if (text == "error")
    out = level::error;
  else
    return false;
  return true;
}

line::line(level lvl, std::string_view component) : level_(lvl) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "%s.%03dZ %s ", stamp, static_cast<int>(millis), level_name(lvl));
  stream_ << prefix << component << ": ";
}

line::~line() {
  if (held_back_ > 0) stream_ << " (" << held_back_ << " similar lines held back)";
  stream_ << '\n';
  const std::string text = stream_.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
}

bool limiter::allow(std::uint64_t& suppressed) {
  const auto now = std::chrono::steady_clock::now();
  const std::scoped_lock lock(mutex_);
  if (now >= window_end_) {
    window_end_ = now + interval_;
    lines_in_window_ = 0;
  }
  if (lines_in_window_ == burst_) {
    ++held_back_;
    return false;
  }
  ++lines_in_window_;
  suppressed = std::exchange(held_back_, 0);
  return true;
}

}  // namespace ferry::log
