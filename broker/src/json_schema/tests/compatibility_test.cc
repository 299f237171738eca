// Confluent's diff test cases (json-schema-provider's diff-*.json resources, taken as facts): for each pair of
// schemas, the differences found and whether the change is compatible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_schema/json_schema.h"
#include "json_schema/schema_diff.h"
#include "json_schema/schema_loader.h"

namespace ferry::json_schema {
namespace {

struct vector_case {
  std::string description;
  std::string original;
  std::string update;
  std::vector<std::string> changes;
  bool compatible = false;
};

std::vector<vector_case> load_vectors() {
  std::ifstream in(FERRY_JSON_SCHEMA_VECTORS);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto all = nlohmann::ordered_json::parse(text, nullptr, false);
  std::vector<vector_case> out;
  if (!all.is_array()) return out;
  for (const auto& v : all) {
    vector_case c;
    c.description = v.value("description", "");
    c.original = v["original"].dump();
    c.update = v["update"].dump();
    // Where Ferry knowingly differs from Confluent (always in the list of differences, never in the verdict), the
    // vector says why and gives Ferry's list.
    const auto& changes = v.contains("ferry_changes") ? v["ferry_changes"] : v["changes"];
    for (const auto& change : changes) c.changes.push_back(change.get<std::string>());
    c.compatible = v.value("compatible", false);
    out.push_back(std::move(c));
  }
  return out;
}

// Names the case in test listings by its description (letters and digits only, for ctest).
void PrintTo(const vector_case& c, std::ostream* os) {
  for (char ch : c.description) *os << (std::isalnum(static_cast<unsigned char>(ch)) != 0 ? ch : '_');
}

class json_schema_compatibility_vectors : public testing::TestWithParam<vector_case> {};

TEST_P(json_schema_compatibility_vectors, differences_and_verdict_match_confluent) {
  const auto& c = GetParam();
  SCOPED_TRACE(c.description);
  auto original = load_schema(c.original, {}, {});
  auto update = load_schema(c.update, {}, {});
  ASSERT_TRUE(original) << original.error().message;
  ASSERT_TRUE(update) << update.error().message;
  std::vector<std::string> found;
  for (const auto& d : compare_schemas(original.value()->root, update.value()->root))
    found.push_back(std::string(type_name(d.type)) + " " + d.path);
  // Confluent walks properties in hash order: the order of the differences is not part of the rules.
  auto expected = c.changes;
  std::sort(found.begin(), found.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(found, expected);

  auto old_schema = parse(c.original, {}, {});
  auto new_schema = parse(c.update, {}, {});
  ASSERT_TRUE(old_schema && new_schema);
  EXPECT_EQ(new_schema.value()->backward_incompatibilities(*old_schema.value()).empty(), c.compatible);
}

INSTANTIATE_TEST_SUITE_P(confluent, json_schema_compatibility_vectors, testing::ValuesIn(load_vectors()),
                         [](const testing::TestParamInfo<vector_case>& info) { return std::to_string(info.index); });

TEST(json_schema_compatibility, vectors_are_read) { EXPECT_GT(load_vectors().size(), 200U); }

}  // namespace
}  // namespace ferry::json_schema
