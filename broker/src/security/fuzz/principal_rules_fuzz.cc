// Parses ssl.principal.mapping.rules from the input's first line and maps the rest, as a distinguished name,
// with them: the rules come from configuration (AlterConfigs too) and the names from client certificates.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "security/principal_mapper.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t line_end = input.find('\n');
  const std::string_view rules = input.substr(0, line_end);
  const std::string_view name = line_end == std::string_view::npos ? std::string_view() : input.substr(line_end + 1);
  auto mapper = ferry::security::principal_mapper::parse(rules, "listener.name.fuzz.");
  if (!mapper) return 0;
  (void)mapper.value().map(name);
  (void)mapper.value().to_string();
  return 0;
}
