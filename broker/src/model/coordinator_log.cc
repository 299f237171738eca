#include "model/coordinator_log.h"

namespace ferry::model {
namespace {

// Decodes UTF-8 into the UTF-16 code units Java's String holds; invalid bytes count as U+FFFD, as Java's
// decoder makes them.
template <typename F>
void for_each_utf16_unit(std::string_view s, F&& unit) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = 0xfffd;
    std::size_t len = 1;
    if (b < 0x80) {
      cp = b;
    } else if ((b >> 5) == 0x6 || (b >> 4) == 0xe || (b >> 3) == 0x1e) {
      len = (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : 4;
      if (i + len <= s.size()) {
        cp = b & (0xff >> (len + 1));
        bool valid = true;
        for (std::size_t k = 1; k < len; ++k) {
          const auto c = static_cast<unsigned char>(s[i + k]);
          if ((c >> 6) != 0x2) valid = false;
          cp = (cp << 6) | (c & 0x3f);
        }
        if (!valid) {
          cp = 0xfffd;
          len = 1;
        }
      } else {
        len = 1;
      }
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      unit(static_cast<std::uint16_t>(0xd800 + (cp >> 10)));
      unit(static_cast<std::uint16_t>(0xdc00 + (cp & 0x3ff)));
    } else {
      unit(static_cast<std::uint16_t>(cp));
    }
    i += len;
  }
}

}  // namespace

std::int32_t coordinator_partition_for(std::string_view key, std::int32_t partitions) {
  std::uint32_t hash = 0;
  for_each_utf16_unit(key, [&](std::uint16_t unit) { hash = hash * 31 + unit; });
  return static_cast<std::int32_t>((hash & 0x7fffffffU) % static_cast<std::uint32_t>(partitions));
}

}  // namespace ferry::model
