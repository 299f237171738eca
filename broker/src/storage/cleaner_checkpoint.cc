#include "storage/cleaner_checkpoint.h"

#include "storage/checkpoint_text.h"

namespace ferry::storage {

std::string encode_cleaner_state(const cleaner_state& state) {
  std::string out =
      "0\n" + std::to_string(state.first_dirty.value()) + "\n" + std::to_string(state.delete_horizons.size()) + "\n";
  for (const auto& [base, horizon] : state.delete_horizons)
    out += std::to_string(base.value()) + " " + std::to_string(horizon) + "\n";
  return out;
}

std::optional<cleaner_state> decode_cleaner_state(std::string_view text) {
  using namespace checkpoint_text;
  std::string_view line;
  int version = -1;
  if (!next_line(text, line) || !parse(line, version) || version != 0) return std::nullopt;
  cleaner_state state;
  std::int64_t first_dirty = 0;
  if (!next_line(text, line) || !parse(line, first_dirty) || first_dirty < 0) return std::nullopt;
  state.first_dirty = offset{first_dirty};
  std::size_t count = 0;
  if (!next_line(text, line) || !parse(line, count)) return std::nullopt;
  for (std::size_t i = 0; i < count; ++i) {
    if (!next_line(text, line)) return std::nullopt;
    const auto space = line.find(' ');
    std::int64_t base = 0;
    std::int64_t horizon = 0;
    if (space == std::string_view::npos || !parse(line.substr(0, space), base) ||
        !parse(line.substr(space + 1), horizon) || base < 0)
      return std::nullopt;
    state.delete_horizons[offset{base}] = horizon;
  }
  if (!text.empty()) return std::nullopt;
  return state;
}

}  // namespace ferry::storage
