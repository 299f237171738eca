#pragma once

#include <sstream>
#include <string_view>

namespace ferry::log {

enum class level { debug = 0, info = 1, warn = 2, error = 3 };

// Sets the lowest level that is printed; messages below it cost one comparison.
void set_level(level lowest);
level current_level();
// Parses "debug", "info", "warn" or "error"; false on anything else.
bool parse_level(std::string_view text, level& out);

// One log line, written to stderr as a whole when it goes out of scope:
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

 private:
  level level_;
  std::ostringstream stream_;
};

}  // namespace ferry::log

// A loop that runs once or not at all, so the macro nests safely under an unbraced if/else.
#define FERRY_LOG(lvl, component)                                                                       \
  for (bool ferry_log_once = ::ferry::log::level::lvl >= ::ferry::log::current_level(); ferry_log_once; \
       ferry_log_once = false)                                                                          \
  ::ferry::log::line(::ferry::log::level::lvl, component)
