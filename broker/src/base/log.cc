#include "base/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <utility>

#include <nlohmann/json.hpp>

namespace ferry::log {
namespace {

std::atomic<level> lowest_level{level::info};
std::atomic<format> line_format{format::text};

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

const char* json_level_name(level lvl) {
  switch (lvl) {
    case level::debug:
      return "debug";
    case level::info:
      return "info";
    case level::warn:
      return "warn";
    case level::error:
      return "error";
  }
  return "?";
}

// 2026-11-30T16:42:44.123Z
std::string timestamp(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03dZ", stamp, static_cast<int>(millis));
  return out;
}

}  // namespace

void set_format(format f) { line_format.store(f, std::memory_order_relaxed); }

bool parse_format(std::string_view text, format& out) {
  if (text == "text")
    out = format::text;
  else if (text == "json")
    out = format::json;
  else
    return false;
  return true;
}

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

line::line(level lvl, std::string_view component)
    : level_(lvl), time_(std::chrono::system_clock::now()), component_(component) {}

line::~line() {
  if (held_back_ > 0) stream_ << " (" << held_back_ << " similar lines held back)";
  std::string text;
  if (line_format.load(std::memory_order_relaxed) == format::json) {
    const nlohmann::json event = {{"time", timestamp(time_)},
                                  {"level", json_level_name(level_)},
                                  {"component", component_},
                                  {"message", stream_.str()}};
    // Messages may quote bytes from outside (topic names, client ids): invalid UTF-8 is replaced, not thrown.
    text = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    text = timestamp(time_) + " " + level_name(level_) + " " + component_ + ": " + stream_.str();
  }
  text += '\n';
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

std::string client_text(std::string_view text) {
  constexpr std::size_t max_chars = 128;
  std::string out(text.substr(0, max_chars));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  if (text.size() > max_chars) out += "...";
  return out;
}

}  // namespace ferry::log
