#include "kube/give_up_clock.h"

#include <gtest/gtest.h>

namespace ferry::kube {
namespace {

using namespace std::chrono_literals;

TEST(give_up_clock, counts_from_the_first_unreachable_attempt) {
  give_up_clock clock(300s);
  const give_up_clock::clock::time_point start{1000h};
  EXPECT_FALSE(clock.unreachable("ns/a", start));
  EXPECT_FALSE(clock.unreachable("ns/a", start + 299s));
  EXPECT_TRUE(clock.unreachable("ns/a", start + 300s));
  // Another resource's count starts at its own first attempt.
  EXPECT_FALSE(clock.unreachable("ns/b", start + 300s));
}

TEST(give_up_clock, reaching_the_cluster_starts_the_count_over) {
  give_up_clock clock(10s);
  const give_up_clock::clock::time_point start{1000h};
  EXPECT_FALSE(clock.unreachable("ns/a", start));
  clock.reached("ns/a");
  EXPECT_FALSE(clock.unreachable("ns/a", start + 20s));
  EXPECT_TRUE(clock.unreachable("ns/a", start + 30s));
}

TEST(give_up_clock, a_zero_timeout_gives_up_at_the_first_unreachable_attempt) {
  give_up_clock clock(0s);
  EXPECT_TRUE(clock.unreachable("ns/a", give_up_clock::clock::time_point{1h}));
}

}  // namespace
}  // namespace ferry::kube
