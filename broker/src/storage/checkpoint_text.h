#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

// Line and number parsing shared by the text checkpoint files (offset_checkpoint.h, leader_epoch_cache.h).
namespace ferry::storage::checkpoint_text {

// The next line (without its '\n'); false at the end.
inline bool next_line(std::string_view& text, std::string_view& line) {
  if (text.empty()) return false;
  const auto end = text.find('\n');
  line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return true;
}

// A whole decimal number, nothing before or after it.
template <typename Int>
bool parse(std::string_view text, Int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

}  // namespace ferry::storage::checkpoint_text
