// Every message of every API, at every version we serve: random contents encode, decode to an equal
// value, and re-encode to identical bytes.
#include <gtest/gtest.h>

#include "protocol/test_support.h"

namespace ferry::protocol {
namespace {

template <typename Message>
void check_round_trips(std::string_view api, std::uint64_t seed) {
  for (std::int16_t version = Message::min_version; version <= Message::max_version; ++version) {
    for (int sample = 0; sample < 20; ++sample) {
      testing::random_source src{std::mt19937_64(seed + version * 100 + sample), {}};
      Message original{};
      testing::fill(src, original, version);

      output_buffer first;
      writer w(first);
      original.encode(w, version);
      auto bytes = first.flatten();

      Message decoded{};
      reader r(bytes);
      ASSERT_TRUE(decoded.decode(r, version)) << api << " v" << version;
      EXPECT_EQ(r.remaining(), 0u) << api << " v" << version;
      EXPECT_TRUE(decoded == original) << api << " v" << version << " sample " << sample;

      output_buffer second;
      writer w2(second);
      decoded.encode(w2, version);
      EXPECT_EQ(second.flatten(), bytes) << api << " v" << version;
    }
  }
}

TEST(round_trip, every_api_and_version) {
  std::size_t apis = 0;
  for_each_api([&]<typename Request, typename Response>() {
    check_round_trips<Request>("request", 1000 + Request::api_key);
    check_round_trips<Response>("response", 2000 + Request::api_key);
    ++apis;
  });
  EXPECT_EQ(apis, all_apis.size());
}

TEST(round_trip, truncated_input_never_decodes) {
  // Any strict prefix of a non-empty encoding must fail to decode rather than read past the end.
  for_each_api([&]<typename Request, typename Response>() {
    for (std::int16_t version = Request::min_version; version <= Request::max_version; ++version) {
      testing::random_source src{std::mt19937_64(7 + version), {}};
      Request original{};
      testing::fill(src, original, version);
      output_buffer out;
      writer w(out);
      original.encode(w, version);
      auto bytes = out.flatten();
      for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        std::vector<std::byte> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        reader r(prefix);
        Request decoded{};
        EXPECT_FALSE(decoded.decode(r, version) && r.remaining() == 0 && cut < bytes.size() && decoded == original)
            << "api " << Request::api_key << " v" << version << " cut " << cut;
      }
    }
  });
}

}  // namespace
}  // namespace ferry::protocol
