#include "storage/file_names.h"

#include <charconv>
#include <cstdio>

namespace ferry::storage {
namespace {

constexpr std::size_t offset_digits = 20;

}  // namespace

std::string offset_file_name(offset o, std::string_view suffix) {
  char digits[offset_digits + 1];
  std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(o.value()));
  std::string name(digits);
  name += suffix;
  return name;
}

std::optional<offset> parse_offset_file_name(std::string_view name, std::string_view suffix) {
  if (name.size() != offset_digits + suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  std::int64_t value = 0;
  const char* first = name.data();
  const char* last = first + offset_digits;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || end != last || value < 0) return std::nullopt;
  return offset{value};
}

}  // namespace ferry::storage
