// Decodes arbitrary bytes as a response frame body, as the broker does when it is the client (a follower
// reading its leader's Fetch responses): two bytes of API key and two of version first (this harness's own
// prefix, since a response does not say what it answers), then the response header and the body.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/api_table.h"
#include "protocol/header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ferry::protocol;
  if (size < 4) return 0;
  const auto api_key = static_cast<std::int16_t>((data[0] << 8) | data[1]);
  const auto version = static_cast<std::int16_t>((data[2] << 8) | data[3]);
  std::vector<std::byte> frame(reinterpret_cast<const std::byte*>(data) + 4,
                               reinterpret_cast<const std::byte*>(data) + size);
  for_each_api([&]<typename Request, typename Response>() {
    if (api_key != Request::api_key || version < Request::min_version || version > Request::max_version) return;
    const bool flexible = Request::first_flexible_version >= 0 && version >= Request::first_flexible_version;
    reader r(frame);
    std::int32_t correlation_id = 0;
    if (!decode_response_header(r, correlation_id, uses_flexible_response_header(api_key, flexible))) return;
    Response response;
    if (response.decode(r, version)) {
      // Whatever decoded must encode again.
      output_buffer out;
      writer w(out);
      response.encode(w, version);
    }
  });
  return 0;
}
