// Parses arbitrary text as an Avro schema; a schema that parses must re-parse from its canonical text to the same
// canonical text, and read its own data.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "avro/avro_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);  // NOLINT: the fuzzer's bytes
  const ferry::schema::parse_limits limits{.max_depth = 32, .max_elements = 2000};
  auto parsed = ferry::avro::parse(text, {}, limits);
  if (!parsed) return 0;
  const std::string canonical = parsed.value()->canonical();
  auto again = ferry::avro::parse(canonical, {}, limits);
  if (!again || again.value()->canonical() != canonical) std::abort();
  (void)parsed.value()->normalized();
  const auto self = parsed.value()->backward_incompatibilities(*parsed.value());
  // Java throws (and Confluent reports) when a field's aliases name another field of the same record.
  if (!self.empty() && self.front().rfind("Unexpected exception", 0) != 0) std::abort();
  return 0;
}
