#pragma once

#include <chrono>
#include <cstdint>

namespace ferry {

// Time comes through this interface so tests can move it by hand (retention, segment age, flush intervals).
class clock {
 public:
  virtual ~clock() = default;
  // Wall-clock milliseconds since the Unix epoch, as Kafka timestamps are.
  [[nodiscard]] virtual std::int64_t now_ms() const = 0;
  // Monotonic time for measuring intervals.
  [[nodiscard]] virtual std::chrono::steady_clock::time_point steady_now() const = 0;
};

class system_clock final : public clock {
 public:
  // now_ms() without a virtual call, for the broker's own timers: UBSan's check of a virtual call reads the
  // vtable's type, which fails while file descriptors run out.
  [[nodiscard]] static std::int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  [[nodiscard]] std::int64_t now_ms() const override { return wall_ms(); }
  [[nodiscard]] std::chrono::steady_clock::time_point steady_now() const override {
    return std::chrono::steady_clock::now();
  }
};

// Monotonic milliseconds (of steady_now()), for intervals kept as numbers.
[[nodiscard]] inline std::int64_t steady_ms(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// A clock that moves only when told to.
class manual_clock final : public clock {
 public:
  explicit manual_clock(std::int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  [[nodiscard]] std::int64_t now_ms() const override { return now_ms_; }
  [[nodiscard]] std::chrono::steady_clock::time_point steady_now() const override {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(now_ms_));
  }
  void advance(std::chrono::milliseconds by) { now_ms_ += by.count(); }

 private:
  std::int64_t now_ms_;
};

}  // namespace ferry
