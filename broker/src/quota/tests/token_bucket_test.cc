#include "quota/token_bucket.h"

#include <gtest/gtest.h>

#include <memory>

#include "quota/client_quotas.h"

namespace ferry::quota {
namespace {

TEST(token_bucket, starts_full_refills_at_the_bound_and_never_above_the_burst) {
  token_bucket bucket;  // 11 samples of 1 s: a burst of 11 × bound
  EXPECT_EQ(bucket.tokens(2, 1000), 22);
  bucket.take(30, 2, 1000);
  EXPECT_EQ(bucket.tokens(2, 1000), -8);
  EXPECT_EQ(bucket.tokens(2, 3000), -4);  // 2 s at 2 a second
  EXPECT_EQ(bucket.tokens(2, 60'000), 22);
}

TEST(token_bucket, a_debt_throttles_until_it_clears) {
  EXPECT_EQ(debt_throttle_ms(5, 2), 0);
  EXPECT_EQ(debt_throttle_ms(0, 2), 0);
  EXPECT_EQ(debt_throttle_ms(-8, 2), 4000);
  EXPECT_EQ(debt_throttle_ms(-1, 3), 333);
  EXPECT_GT(debt_throttle_ms(-1, 0), 0);  // a zero bound: its debt never clears
}

std::shared_ptr<const quota_table> mutation_rate_of(double rate) {
  return std::make_shared<const quota_table>(
      quota_entries{{{entity_name::of("alice"), std::nullopt}, {{quota_key::controller_mutation_rate, rate}}}});
}

TEST(client_quotas, a_strict_mutation_is_refused_only_once_the_bucket_is_in_debt) {
  // ControllerMutationQuotaManagerTest's strict quota: the mutation that empties the bucket is made.
  client_quotas quotas;
  quotas.replace_table(mutation_rate_of(2));
  auto out = quotas.record_mutation("alice", "app", 30, true, 1000);  // 22 tokens: 30 goes to −8
  EXPECT_FALSE(out.refused);
  EXPECT_EQ(out.throttle_ms, 0);
  out = quotas.record_mutation("alice", "app", 1, true, 2000);  // −6 after a second
  EXPECT_TRUE(out.refused);
  EXPECT_EQ(out.throttle_ms, 3000);
  out = quotas.record_mutation("alice", "app", 1, true, 5000);  // back at 0: not in debt
  EXPECT_FALSE(out.refused);
  // Other users are not alice's budget, and bob has no quota.
  EXPECT_FALSE(quotas.record_mutation("bob", "app", 1000, true, 5000).refused);
  EXPECT_FALSE(quotas.record_mutation("bob", "app", 1, true, 5001).refused);
}

TEST(client_quotas, a_permissive_mutation_is_made_and_throttled_by_its_debt) {
  client_quotas quotas;
  quotas.replace_table(mutation_rate_of(2));
  auto out = quotas.record_mutation("alice", "app", 20, false, 1000);
  EXPECT_FALSE(out.refused);
  EXPECT_EQ(out.throttle_ms, 0);
  out = quotas.record_mutation("alice", "app", 6, false, 1000);  // 2 left: −4
  EXPECT_FALSE(out.refused);
  EXPECT_EQ(out.throttle_ms, 2000);
  const auto totals = quotas.totals();
  ASSERT_EQ(totals.size(), 1U);
  EXPECT_EQ(totals[0].kind, quota_kind::controller_mutation);
  EXPECT_EQ(totals[0].user, "alice");
  EXPECT_EQ(totals[0].recorded, 26);
  EXPECT_EQ(totals[0].throttled, 1U);
}

}  // namespace
}  // namespace ferry::quota
