#pragma once

#include <string>
#include <system_error>

namespace ferry {

// The std::error_category of one library's `enum class errc`: a name and a function that describes each
// value. Each library defines its category once:
//
//   const std::error_category& error_category() {
//     static const enum_error_category<errc> instance("storage", describe);
//     return instance;
//   }
template <typename Enum>
class enum_error_category final : public std::error_category {
 public:
  using describe_fn = const char* (*)(Enum);

  enum_error_category(const char* name, describe_fn describe) : name_(name), describe_(describe) {}

  [[nodiscard]] const char* name() const noexcept override { return name_; }
  [[nodiscard]] std::string message(int value) const override {
    const char* text = describe_(static_cast<Enum>(value));
    return text != nullptr ? text : std::string("unknown ") + name_ + " error " + std::to_string(value);
  }

 private:
  const char* name_;
  describe_fn describe_;
};

}  // namespace ferry
