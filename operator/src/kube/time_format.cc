#include "kube/time_format.h"

#include <charconv>
#include <cstdio>

namespace ferry::kube {
namespace {

std::string format(system_time t, bool micro) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(seconds);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss clock(seconds - day);
  char text[40];
  const int n = std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(date.year()),
                              static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                              static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                              static_cast<int>(clock.seconds().count()));
  std::string out(text, static_cast<std::size_t>(n));
  if (micro) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - seconds).count();
    std::snprintf(text, sizeof text, ".%06lld", static_cast<long long>(us));
    out += text;
  }
  return out + "Z";
}

bool number(std::string_view text, std::size_t at, std::size_t length, int& out) {
  if (at + length > text.size()) return false;
  const auto* first = text.data() + at;
  const auto [end, ec] = std::from_chars(first, first + length, out);
  return ec == std::errc() && end == first + length;
}

}  // namespace

std::string format_time(system_time t) { return format(t, false); }
std::string format_micro_time(system_time t) { return format(t, true); }

std::optional<system_time> parse_time(std::string_view text) {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text.back() != 'Z' || !number(text, 0, 4, year) || !number(text, 5, 2, month) || !number(text, 8, 2, day) ||
      !number(text, 11, 2, hour) || !number(text, 14, 2, minute) || !number(text, 17, 2, second)) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  system_time t = std::chrono::sys_days(date) + std::chrono::hours(hour) + std::chrono::minutes(minute) +
                  std::chrono::seconds(second);
  if (text.size() > 21 && text[19] == '.') {
    const auto digits = text.substr(20, text.size() - 21);
    int fraction = 0;
    if (digits.empty() || digits.size() > 9 || !number(text, 20, digits.size(), fraction)) return std::nullopt;
    std::int64_t ns = fraction;
    for (auto i = digits.size(); i < 9; ++i) ns *= 10;
    t += std::chrono::duration_cast<system_time::duration>(std::chrono::nanoseconds(ns));
  } else if (text.size() != 20) {
    return std::nullopt;
  }
  return t;
}

}  // namespace ferry::kube
