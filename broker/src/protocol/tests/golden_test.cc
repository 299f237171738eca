// Requests captured from real clients (see golden/README.md) decode, and re-encode to the same bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "protocol/api_table.h"
#include "protocol/header.h"

namespace ferry::protocol {
namespace {

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

TEST(golden, captured_client_requests_round_trip) {
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FERRY_GOLDEN_DIR)) {
    if (entry.path().extension() != ".bin") continue;
    auto frame = read_file(entry.path());
    ASSERT_GE(frame.size(), 4u);
    std::vector<std::byte> body(frame.begin() + 4, frame.end());  // drop the size prefix
    reader r(body);
    request_header header;
    ASSERT_TRUE(decode_request_header(r, header)) << entry.path();
    bool matched = false;
    for_each_api([&]<typename Request, typename Response>() {
      if (header.api_key != Request::api_key) return;
      matched = true;
      const bool flexible =
          Request::first_flexible_version >= 0 && header.api_version >= Request::first_flexible_version;
      if (flexible) skip_header_tags(r);
      const std::size_t body_start = r.position();
      Request request;
      ASSERT_TRUE(request.decode(r, header.api_version)) << entry.path();
      EXPECT_EQ(r.remaining(), 0u) << entry.path();
      output_buffer out;
      writer w(out);
      request.encode(w, header.api_version);
      const auto again = out.flatten();
      EXPECT_EQ(again, std::vector<std::byte>(body.begin() + static_cast<std::ptrdiff_t>(body_start), body.end()))
          << entry.path();
    });
    EXPECT_TRUE(matched) << entry.path() << " has API key " << header.api_key;
    ++checked;
  }
  EXPECT_GE(checked, 1u) << "no golden captures in " << FERRY_GOLDEN_DIR;
}

}  // namespace
}  // namespace ferry::protocol
