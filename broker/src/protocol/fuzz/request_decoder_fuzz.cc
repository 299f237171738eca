// Decodes arbitrary bytes as a request frame body: header first, then the body of whichever API and
// version the header names, as the broker's dispatcher does.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/api_table.h"
#include "protocol/header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ferry::protocol;
  std::vector<std::byte> frame(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  reader r(frame);
  request_header header;
  if (!decode_request_header(r, header)) return 0;
  for_each_api([&]<typename Request, typename Response>() {
    if (header.api_key != Request::api_key || header.api_version < Request::min_version ||
        header.api_version > Request::max_version)
      return;
    const bool flexible = Request::first_flexible_version >= 0 && header.api_version >= Request::first_flexible_version;
    if (flexible) skip_header_tags(r);
    Request request;
    if (request.decode(r, header.api_version)) {
      // Whatever decoded must encode again.
      output_buffer out;
      writer w(out);
      request.encode(w, header.api_version);
    }
  });
  return 0;
}
