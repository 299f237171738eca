#pragma once

// The bytes of a fuzz input read as a stream of small choices: a model-based target reads its next event, and
// that event's arguments, from here. Once the bytes are used up every choice is 0 and done() is true.
#include <cstddef>
#include <cstdint>

namespace ferry::group::fuzz {

class fuzz_input {
 public:
  fuzz_input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  [[nodiscard]] bool done() const { return at_ >= size_; }
  // A number below `n` (n > 0).
  [[nodiscard]] int pick(int n) {
    if (done()) return 0;
    return data_[at_++] % n;
  }
  [[nodiscard]] bool flip() { return pick(2) == 1; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// Stops the run where the fuzzer and the corpus replay both see it.
[[noreturn]] inline void fail() { __builtin_trap(); }

}  // namespace ferry::group::fuzz
