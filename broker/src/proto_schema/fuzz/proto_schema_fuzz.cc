// Feeds arbitrary text to the Protobuf schema parser, as `.proto` source or base64 descriptor; text before a NUL byte
// is a reference the rest may import as "dep.proto". An input that starts with 0x01 is a serialized
// FileDescriptorProto, sent in base64, so that mutations reach the descriptor builder. What parses must render a
// canonical text that parses again to the same canonical text, be compatible with itself both ways, and have a
// normalized text that parses too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "proto_schema/proto_schema.h"

namespace {

std::string base64(std::string_view bytes) {
  static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : bytes) {
    bits = (bits << 8) | static_cast<unsigned char>(c);
    count += 8;
    while (count >= 6) {
      count -= 6;
      out.push_back(alphabet[(bits >> count) & 63]);
    }
  }
  if (count > 0) out.push_back(alphabet[(bits << (6 - count)) & 63]);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ferry;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string encoded;
  if (!text.empty() && text.front() == '\x01') {
    encoded = base64(text.substr(1));
    text = encoded;
  }
  std::vector<schema::named_schema> references;
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    references.push_back({"dep.proto", std::string(text.substr(0, nul))});
    text.remove_prefix(nul + 1);
  }
  const schema::parse_limits limits{.max_depth = 16, .max_elements = 2000};
  const auto parsed = proto_schema::parse(text, references, limits);
  if (!parsed) return 0;
  const auto& schema = *parsed.value();
  if (!schema.backward_incompatibilities(schema).empty()) std::abort();
  const auto again = proto_schema::parse(schema.canonical(), references, limits);
  if (!again) std::abort();
  if (again.value()->canonical() != schema.canonical()) std::abort();
  if (!again.value()->backward_incompatibilities(schema).empty()) std::abort();
  if (!schema.backward_incompatibilities(*again.value()).empty()) std::abort();
  if (!proto_schema::parse(schema.normalized(), references, limits)) std::abort();
  return 0;
}
