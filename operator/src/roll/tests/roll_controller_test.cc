#include "roll/roll_controller.h"

#include <gtest/gtest.h>

namespace ferry::roll {
namespace {

using kind = eviction_outcome::kind;

TEST(eviction, names_the_pod_and_only_the_judged_one) {
  const auto body = eviction("ferry", "ferry-broker-2", "uid-7");
  EXPECT_EQ(body["apiVersion"], "policy/v1");
  EXPECT_EQ(body["kind"], "Eviction");
  EXPECT_EQ(body["metadata"]["name"], "ferry-broker-2");
  EXPECT_EQ(body["metadata"]["namespace"], "ferry");
  EXPECT_EQ(body["deleteOptions"]["preconditions"]["uid"], "uid-7");
  EXPECT_FALSE(eviction("ferry", "ferry-broker-2", "").contains("deleteOptions"));
}

TEST(eviction, a_budgets_refusal_is_a_wait_with_its_reason) {
  // As kube-apiserver answers when the PodDisruptionBudget allows no disruption.
  const std::string refusal = R"({"kind":"Status","apiVersion":"v1","status":"Failure",
    "message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests",
    "details":{"causes":[{"reason":"DisruptionBudget",
      "message":"The disruption budget ferry-broker needs 3 healthy pods and has 3 currently"}]},"code":429})";
  const auto outcome = read_eviction_answer(429, refusal);
  EXPECT_EQ(outcome.what, kind::refused);
  EXPECT_EQ(outcome.message, "The disruption budget ferry-broker needs 3 healthy pods and has 3 currently");
}

TEST(eviction, other_answers) {
  EXPECT_EQ(read_eviction_answer(201, R"({"kind":"Status","status":"Success"})").what, kind::evicted);
  EXPECT_EQ(read_eviction_answer(200, "{}").what, kind::evicted);
  EXPECT_EQ(read_eviction_answer(404, "{}").what, kind::gone);
  EXPECT_EQ(read_eviction_answer(409, R"({"message":"Precondition failed: UID in precondition"})").what, kind::gone);
  // The API server's own throttling is no budget: the controller backs off as for any failure.
  const auto throttled = read_eviction_answer(429, R"({"message":"Too many requests, please try again later."})");
  EXPECT_EQ(throttled.what, kind::failed);
  EXPECT_EQ(throttled.message, "Too many requests, please try again later.");
  const auto forbidden = read_eviction_answer(403, "not json");
  EXPECT_EQ(forbidden.what, kind::failed);
  EXPECT_EQ(forbidden.message, "not json");
}

}  // namespace
}  // namespace ferry::roll
