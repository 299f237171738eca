#pragma once

// Work that runs outside any request (a timer's callback, a periodic job, a detached coroutine) has no caller
// to hand an exception to: one escaping it ends the process (std::terminate). Every such entry point goes
// through these helpers instead (scripts/check-guarded enforces it): a failure is logged with its context,
// counted (ferry_confined_failures_total), and stays confined to the work that failed; the caller decides what
// else to give up (a group unloaded and read back, a partition taken offline).
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace ferry {

// Failures confined since the process started.
[[nodiscard]] std::uint64_t confined_failures();
// Logs and counts one failure of `context`.
void report_confined_failure(std::string_view context, const std::exception_ptr& failure) noexcept;

// Runs `work`; false when it threw (the failure is logged and counted).
template <typename Work>
bool run_guarded(std::string_view context, Work&& work) noexcept {
  try {
    std::forward<Work>(work)();
    return true;
  } catch (...) {
    report_confined_failure(context, std::current_exception());
    return false;
  }
}

// A callback (of a timer, a post, a completion) that runs through run_guarded. `context` names the work in the
// log line: a string literal, since the callback keeps only a view of it.
template <typename Callback>
auto guarded(std::string_view context, Callback callback) {
  return [context, callback = std::move(callback)](auto&&... args) mutable noexcept {
    (void)run_guarded(context, [&] { callback(std::forward<decltype(args)>(args)...); });
  };
}

// The completion token of a detached coroutine (in place of boost::asio::detached): what escapes the coroutine
// is logged and counted, never rethrown; `finished`, if given, runs after it either way.
class guarded_detached {
 public:
  explicit guarded_detached(std::string context, std::function<void()> finished = {})
      : context_(std::move(context)), finished_(std::move(finished)) {}
  void operator()(const std::exception_ptr& failure) const noexcept {
    if (failure) report_confined_failure(context_, failure);
    if (finished_) (void)run_guarded(context_, finished_);
  }

 private:
  std::string context_;
  std::function<void()> finished_;
};

}  // namespace ferry
