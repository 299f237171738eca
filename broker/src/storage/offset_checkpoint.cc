#include "storage/offset_checkpoint.h"

#include "storage/checkpoint_text.h"
#include "storage/errc.h"

namespace ferry::storage {
using checkpoint_text::next_line;
using checkpoint_text::parse;

std::string encode_offset_checkpoint(const offset_map& offsets) {
  std::string out = "0\n" + std::to_string(offsets.size()) + "\n";
  for (const auto& [tp, o] : offsets) {
    out += tp.topic;
    out += ' ';
    out += std::to_string(tp.partition.value());
    out += ' ';
    out += std::to_string(o.value());
    out += '\n';
  }
  return out;
}

result<offset_map> decode_offset_checkpoint(std::string_view text) {
  std::string_view line;
  std::int32_t version = -1;
  if (!next_line(text, line) || !parse(line, version) || version != 0) return errc::corrupt_log;
  std::int64_t count = -1;
  if (!next_line(text, line) || !parse(line, count) || count < 0) return errc::corrupt_log;
  offset_map out;
  for (std::int64_t i = 0; i < count; ++i) {
    if (!next_line(text, line)) return errc::corrupt_log;
    // The topic cannot hold spaces, so the last two fields are the numbers.
    const auto last_space = line.rfind(' ');
    if (last_space == std::string_view::npos || last_space == 0) return errc::corrupt_log;
    const auto middle_space = line.rfind(' ', last_space - 1);
    if (middle_space == std::string_view::npos || middle_space == 0) return errc::corrupt_log;
    std::int32_t partition = -1;
    std::int64_t value = -1;
    if (!parse(line.substr(middle_space + 1, last_space - middle_space - 1), partition) || partition < 0 ||
        !parse(line.substr(last_space + 1), value) || value < 0)
      return errc::corrupt_log;
    out[topic_partition{std::string(line.substr(0, middle_space)), partition_id{partition}}] = offset{value};
  }
  if (next_line(text, line) && !line.empty()) return errc::corrupt_log;
  return out;
}

}  // namespace ferry::storage
