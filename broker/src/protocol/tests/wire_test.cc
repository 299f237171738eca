#include "protocol/wire.h"

#include <gtest/gtest.h>

#include "protocol/header.h"

namespace ferry::protocol {
namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(wire, compact_string_and_tagged_fields) {
  output_buffer out;
  writer w(out);
  w.write_string(true, "abc");
  w.write_nullable_string(true, std::nullopt);
  w.write_uvarint(1);  // one tagged field
  w.write_uvarint(5);
  w.write_uvarint(2);
  w.write_int16(0x0102);
  auto bytes = out.flatten();
  EXPECT_EQ(bytes, bytes_of({4, 'a', 'b', 'c', 0, 1, 5, 2, 1, 2}));

  reader r(bytes);
  std::string s;
  std::optional<std::string> n = "x";
  r.read_string(true, s);
  r.read_nullable_string(true, n);
  std::uint32_t seen_tag = 0;
  r.read_tagged_fields([&](std::uint32_t tag, reader& field) {
    seen_tag = tag;
    EXPECT_EQ(field.read_int16(), 0x0102);
    return true;
  });
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(s, "abc");
  EXPECT_FALSE(n.has_value());
  EXPECT_EQ(seen_tag, 5u);
}

TEST(wire, lengths_beyond_the_frame_fail_before_allocating) {
  // An array claiming two billion elements in a 6-byte frame.
  auto bytes = bytes_of({0x7f, 0xff, 0xff, 0xff, 0, 0});
  reader r(bytes);
  EXPECT_EQ(r.read_length(false, false), -1);
  EXPECT_FALSE(r.ok());
}

TEST(wire, a_varint_that_never_ends_fails) {
  std::vector<std::byte> bytes(12, std::byte{0xff});
  reader r(bytes);
  (void)r.read_uvarint();
  EXPECT_FALSE(r.ok());
}

TEST(wire, reads_after_failure_return_zero) {
  auto bytes = bytes_of({1});
  reader r(bytes);
  EXPECT_EQ(r.read_int32(), 0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.read_int8(), 0);
}

TEST(header, frames_have_their_size_first) {
  output_buffer out;
  begin_response_frame(out, 42, true);
  writer(out).write_int16(7);
  finish_frame(out);
  EXPECT_EQ(out.flatten(), bytes_of({0, 0, 0, 7, 0, 0, 0, 42, 0, 0, 7}));
}

TEST(header, api_versions_responses_never_use_the_flexible_header) {
  EXPECT_FALSE(uses_flexible_response_header(api_versions_key, true));
  EXPECT_TRUE(uses_flexible_response_header(3, true));
  EXPECT_FALSE(uses_flexible_response_header(3, false));
}

}  // namespace
}  // namespace ferry::protocol
