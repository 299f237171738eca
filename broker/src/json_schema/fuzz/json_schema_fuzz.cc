// Any text through the JSON Schema parser; a schema that parses must re-parse from its canonical text to the same
// texts, and be compatible with itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "json_schema/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ferry::schema::parse_limits limits{16, 2000};
  auto parsed = ferry::json_schema::parse(text, {}, limits);
  if (!parsed) return 0;
  const auto& schema = *parsed.value();
  auto again = ferry::json_schema::parse(schema.canonical(), {}, limits);
  if (!again || again.value()->canonical() != schema.canonical() || again.value()->normalized() != schema.normalized())
    std::abort();
  if (!schema.backward_incompatibilities(schema).empty() || !schema.backward_incompatibilities(*again.value()).empty())
    std::abort();
  return 0;
}
