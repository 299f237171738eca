#pragma once

#include <chrono>
#include <functional>

namespace ferry::storage {

// Where logs send the disk work that must not hold up the thread appending to them: sealing a rolled
// segment (three fsyncs), writing its producer snapshot, and removing deleted segment files once
// file.delete.delay.ms has passed. The broker runs it on its blocking pool; work not run before shutdown is
// dropped, and the next start finishes it (leftover "*.deleted" files are removed, unsealed segments
// recovered).
class background {
 public:
  virtual ~background() = default;
  // Soon, on another thread.
  virtual void run(std::function<void()> work) = 0;
  // After `delay`, on another thread.
  virtual void run_after(std::chrono::milliseconds delay, std::function<void()> work) = 0;
};

// Runs all work at once on the caller's thread, delays included: for tools and tests that do not care when.
class inline_background final : public background {
 public:
  void run(std::function<void()> work) override { work(); }
  void run_after(std::chrono::milliseconds, std::function<void()> work) override { work(); }
};

}  // namespace ferry::storage
