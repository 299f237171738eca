// Feeds arbitrary bytes to the PLAIN message parser. What parses must be made of the input's parts: an authzid
// that is empty or the user, a non-empty user and password, and two NULs between them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "security/plain.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ferry::security;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto message = parse_plain_message(text);
  if (!message) return 0;
  const auto& m = message.value();
  if (m.user.empty() || m.password.empty()) std::abort();
  if (!m.authorization_id.empty() && m.authorization_id != m.user) std::abort();
  if (m.authorization_id.size() + m.user.size() + m.password.size() + 2 != size) std::abort();
  return 0;
}
