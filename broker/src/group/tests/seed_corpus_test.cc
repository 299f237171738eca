// Every seed of offsets_records_fuzz (fuzz/offsets_records_corpus, written by fuzz/make_corpus.py in the shapes
// Kafka writes) decodes, and re-encodes in its own version to exactly its bytes: the fuzz replay only checks
// that whatever decodes round-trips, which a seed that failed to decode would pass silently.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "group/consumer_protocol.h"
#include "group/offsets_records.h"

namespace ferry::group {
namespace {

struct seed {
  std::string name;
  char selector = 0;
  std::vector<std::byte> data;
};

std::vector<seed> read_seeds() {
  std::vector<seed> out;
  for (const auto& entry : std::filesystem::directory_iterator(FERRY_OFFSETS_RECORDS_CORPUS)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.empty()) continue;
    seed s{entry.path().filename().string(), raw[0], {}};
    for (std::size_t i = 1; i < raw.size(); ++i) s.data.push_back(static_cast<std::byte>(raw[i]));
    out.push_back(std::move(s));
  }
  return out;
}

std::int16_t version_of(const std::vector<std::byte>& data) {
  return static_cast<std::int16_t>((std::to_integer<int>(data[0]) << 8) | std::to_integer<int>(data[1]));
}

// Seeds carrying tagged fields Ferry skips, or fields of a version newer than it knows, do not re-encode to
// the same bytes; they only have to decode.
bool exact(const seed& s) {
  return s.name.find("tag") == std::string::npos && s.name.find("topic-id") == std::string::npos &&
         s.name.find("future") == std::string::npos;
}

TEST(SeedCorpus, EverySeedDecodesAndReencodesToItsBytes) {
  const auto seeds = read_seeds();
  ASSERT_GE(seeds.size(), 30u);
  for (const auto& s : seeds) {
    SCOPED_TRACE(s.name);
    switch (s.selector) {
      case 'k': {
        const auto key = decode_key(s.data);
        ASSERT_TRUE(key) << key.error().message();
        if (const auto* k = std::get_if<offset_commit_key>(&key.value())) {
          if (version_of(s.data) == offset_commit_key_version) {
            EXPECT_EQ(encode_key(*k), s.data);
          }
        } else if (const auto* g = std::get_if<group_metadata_key>(&key.value())) {
          EXPECT_EQ(encode_key(*g), s.data);
        }
        break;
      }
      case 'o': {
        const auto value = decode_offset_commit_value(s.data);
        ASSERT_TRUE(value) << value.error().message();
        if (exact(s)) {
          EXPECT_EQ(encode_offset_commit_value(value.value(), version_of(s.data)), s.data);
        }
        break;
      }
      case 'g': {
        const auto value = decode_group_metadata_value(s.data);
        ASSERT_TRUE(value) << value.error().message();
        if (exact(s)) {
          EXPECT_EQ(encode_group_metadata_value(value.value(), version_of(s.data)), s.data);
        }
        // The members' embedded protocol decodes too, for consumer groups.
        if (value.value().protocol_type == "consumer") {
          for (const auto& m : value.value().members) {
            EXPECT_TRUE(decode_subscription(m.subscription));
            EXPECT_TRUE(decode_assignment(m.assignment));
          }
        }
        break;
      }
      case 's': {
        const auto sub = decode_subscription(s.data);
        ASSERT_TRUE(sub) << sub.error().message();
        if (exact(s)) {
          EXPECT_EQ(encode_subscription(sub.value()), s.data);
        }
        break;
      }
      case 'a': {
        const auto a = decode_assignment(s.data);
        ASSERT_TRUE(a) << a.error().message();
        if (exact(s)) {
          EXPECT_EQ(encode_assignment(a.value()), s.data);
        }
        break;
      }
      case 'r': {
        ASSERT_FALSE(s.data.empty());
        const auto key_size = std::to_integer<std::size_t>(s.data[0]);
        ASSERT_LE(1 + key_size, s.data.size());
        const auto key = std::span(s.data).subspan(1, key_size);
        const auto rest = std::span(s.data).subspan(1 + key_size);
        const auto record =
            decode_record(key, rest.empty() ? std::nullopt : std::optional<std::span<const std::byte>>(rest));
        ASSERT_TRUE(record) << record.error().message();
        EXPECT_EQ(s.name.find("tombstone") != std::string::npos,
                  std::visit(
                      [](const auto& r) {
                        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, unknown_key>)
                          return false;
                        else
                          return !r.value.has_value();
                      },
                      record.value()));
        break;
      }
      default:
        ADD_FAILURE() << "unknown selector " << s.selector;
    }
  }
}

}  // namespace
}  // namespace ferry::group
