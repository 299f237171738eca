#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

namespace ferry::log {

enum class level { debug = 0, info = 1, warn = 2, error = 3 };

// Sets the lowest level that is printed; messages below it cost one comparison.
void set_level(level lowest);
level current_level();
// Parses "debug", "info", "warn" or "error"; false on anything else.
bool parse_level(std::string_view text, level& out);

// text: one readable line per event (below); json: one JSON object per line, for log collectors:
//   {"time":"2026-11-30T16:42:44.123Z","level":"info","component":"storage","message":"rolled segment ..."}
enum class format { text, json };
void set_format(format f);
// Parses "text" or "json"; false on anything else.
bool parse_format(std::string_view text, format& out);

// Text a client chose (a user name, a subject) as a log line may show it: cut to 128 characters, control
// characters (a forged line break) replaced by '?'.
std::string client_text(std::string_view text);

// One log line, written to stderr as a whole when it goes out of scope, in the format set:
//   2026-11-30T16:42:44.123Z INFO  storage: rolled segment 00000000000000001234
class line {
 public:
  line(level lvl, std::string_view component);
  ~line();
  line(const line&) = delete;
  line& operator=(const line&) = delete;

  template <typename T>
  line& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  // Appends " (N similar lines held back)" at the end of the line when N > 0.
  line& held_back(std::uint64_t n) {
    held_back_ = n;
    return *this;
  }

 private:
  level level_;
  std::chrono::system_clock::time_point time_;
  std::string component_;
  std::ostringstream stream_;
  std::uint64_t held_back_ = 0;
};

// Lets through at most `burst` lines per `interval` from one place in the code, so a flood of identical events
// (a client sending garbage in a loop, accept failing while descriptors are exhausted) cannot fill the disk
// with log lines, while a few separate events still each get their line. The first line let through after a
// held-back stretch says how many were held back. Thread-safe.
class limiter {
 public:
  static constexpr std::uint32_t default_burst = 10;

  explicit limiter(std::chrono::milliseconds interval, std::uint32_t burst = default_burst)
      : interval_(interval), burst_(burst) {}
  // True when a line may go out now; `suppressed` is then how many were held back before it.
  bool allow(std::uint64_t& suppressed);

 private:
  const std::chrono::milliseconds interval_;
  const std::uint32_t burst_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point window_end_{};
  std::uint32_t lines_in_window_ = 0;
  std::uint64_t held_back_ = 0;
};

}  // namespace ferry::log

// A loop that runs once or not at all, so the macro nests safely under an unbraced if/else.
// FERRY_LOG, limited to a few lines per `interval_ms` from this call site (see log::limiter); a line that follows
// held-back ones ends with their number.
#define FERRY_LOG_LIMITED(lvl, component, interval_ms)                                                                \
  for (                                                                                                               \
      std::uint64_t ferry_log_held = 0, ferry_log_once = ::ferry::log::level::lvl >= ::ferry::log::current_level() && \
                                                         [&ferry_log_held] {                                          \
                                                           static ::ferry::log::limiter ferry_log_limiter{            \
                                                               std::chrono::milliseconds(interval_ms)};               \
                                                           return ferry_log_limiter.allow(ferry_log_held);            \
                                                         }();                                                         \
      ferry_log_once != 0; ferry_log_once = 0)                                                                        \
  ::ferry::log::line(::ferry::log::level::lvl, component).held_back(ferry_log_held)

#define FERRY_LOG(lvl, component)                                                                       \
  for (bool ferry_log_once = ::ferry::log::level::lvl >= ::ferry::log::current_level(); ferry_log_once; \
       ferry_log_once = false)                                                                          \
  ::ferry::log::line(::ferry::log::level::lvl, component)
