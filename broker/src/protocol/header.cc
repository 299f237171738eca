#include "protocol/header.h"

#include <boost/endian/conversion.hpp>

namespace ferry::protocol {

bool decode_request_header(reader& r, request_header& out) {
  out.api_key = r.read_int16();
  out.api_version = r.read_int16();
  out.correlation_id = r.read_int32();
  r.read_nullable_string(false, out.client_id);
  return r.ok();
}

void skip_header_tags(reader& r) {
  r.read_tagged_fields([](std::uint32_t, reader&) { return false; });
}

bool uses_flexible_response_header(std::int16_t api_key, bool flexible_body) {
  return flexible_body && api_key != api_versions_key;
}

void begin_response_frame(output_buffer& out, std::int32_t correlation_id, bool flexible_header) {
  writer w(out);
  w.write_int32(0);  // size, patched by finish_frame
  w.write_int32(correlation_id);
  if (flexible_header) w.write_uvarint(0);
}

void begin_request_frame(output_buffer& out, const request_header& header, bool flexible_header) {
  writer w(out);
  w.write_int32(0);  // size, patched by finish_frame
  w.write_int16(header.api_key);
  w.write_int16(header.api_version);
  w.write_int32(header.correlation_id);
  w.write_nullable_string(false, header.client_id);
  if (flexible_header) w.write_uvarint(0);
}

bool decode_response_header(reader& r, std::int32_t& correlation_id, bool flexible_header) {
  correlation_id = r.read_int32();
  if (flexible_header) skip_header_tags(r);
  return r.ok();
}

void finish_frame(output_buffer& out) {
  const auto size = boost::endian::native_to_big(static_cast<std::int32_t>(out.size() - 4));
  out.overwrite(0, std::as_bytes(std::span(&size, 1)));
}

}  // namespace ferry::protocol
