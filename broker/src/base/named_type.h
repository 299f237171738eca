#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>

namespace ferry {

// A value of type T that cannot be mixed up with other values of the same representation: an offset is not
// an epoch, and a broker id is not a partition id. Conversions are explicit in both directions.
template <typename T, typename Tag>
class named_type {
 public:
  using value_type = T;

  constexpr named_type() = default;
  constexpr explicit named_type(T value) : value_(value) {}

  [[nodiscard]] constexpr T value() const { return value_; }

  constexpr auto operator<=>(const named_type&) const = default;

  friend std::ostream& operator<<(std::ostream& out, const named_type& v) { return out << v.value_; }

 private:
  T value_{};
};

}  // namespace ferry

template <typename T, typename Tag>
struct std::hash<ferry::named_type<T, Tag>> {
  std::size_t operator()(const ferry::named_type<T, Tag>& v) const noexcept { return std::hash<T>{}(v.value()); }
};
