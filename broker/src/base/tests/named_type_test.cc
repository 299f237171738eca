#include "base/named_type.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <unordered_set>

namespace ferry {
namespace {

using apples = named_type<int, struct apples_tag>;
using pears = named_type<int, struct pears_tag>;

TEST(named_type, compares_by_value) {
  EXPECT_EQ(apples{3}, apples{3});
  EXPECT_LT(apples{2}, apples{3});
  EXPECT_EQ(apples{7}.value(), 7);
}

TEST(named_type, different_tags_do_not_convert) {
  EXPECT_FALSE((std::is_convertible_v<apples, pears>));
  EXPECT_FALSE((std::is_convertible_v<int, apples>));
}

TEST(named_type, hashes) {
  std::unordered_set<apples> set{apples{1}, apples{2}, apples{1}};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace ferry
