#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/wire.h"

namespace ferry::protocol {

inline constexpr std::int16_t api_versions_key = 18;

// The request header, v1 or v2. (v0, without client_id, is used only by ControlledShutdown v0, which Ferry
// does not serve.) client_id is a classic int16-length string even in v2, so the header parses before the
// API's flexibility is known; v2 adds a tagged-field section.
struct request_header {
  std::int16_t api_key = 0;
  std::int16_t api_version = 0;
  std::int32_t correlation_id = 0;
  std::optional<std::string> client_id;
};

// Reads api_key, api_version, correlation_id and client_id. The caller then skips the v2 tag section with
// skip_header_tags when the API version is flexible. False if the frame is too short.
[[nodiscard]] bool decode_request_header(reader& r, request_header& out);
void skip_header_tags(reader& r);

// Request header v2 and response header v1 go with flexible API versions, except that ApiVersions responses
// always use header v0 (KIP-511) so a client can read the error before knowing what the broker speaks.
[[nodiscard]] bool uses_flexible_response_header(std::int16_t api_key, bool flexible_body);

// Starts a response frame: a 4-byte size placeholder and the response header. finish_frame writes the size.
void begin_response_frame(output_buffer& out, std::int32_t correlation_id, bool flexible_header);
void finish_frame(output_buffer& out);

// The client side (a follower fetching from its leader): a request frame's start, a 4-byte size placeholder
// for finish_frame and the request header (v2 for a flexible API version, else v1), and the response header:
// the correlation id, then the tag section when flexible.
void begin_request_frame(output_buffer& out, const request_header& header, bool flexible_header);
[[nodiscard]] bool decode_response_header(reader& r, std::int32_t& correlation_id, bool flexible_header);

}  // namespace ferry::protocol
