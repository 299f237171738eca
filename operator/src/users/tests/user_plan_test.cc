#include "users/user_plan.h"

#include <gtest/gtest.h>

namespace ferry::users {
namespace {

authz::acl_binding read_on(const std::string& topic, authz::operation op = authz::operation::read) {
  return {{authz::resource_type::topic, topic, authz::pattern_type::literal},
          {"User:app", "*", op, authz::permission::allow}};
}

TEST(UserPlan, WantedAclsAreCreatedAndThoseTheOperatorMadeBeforeAreDeleted) {
  const auto plan = plan_acls({read_on("a"), read_on("b")}, {read_on("b"), read_on("old"), read_on("by-hand")},
                              {read_on("b"), read_on("old")}, false);
  EXPECT_EQ(plan.create, (std::vector{read_on("a")}));
  EXPECT_EQ(plan.remove, (std::vector{read_on("old")}));
  EXPECT_EQ(plan.unmanaged, (std::vector{read_on("by-hand")}));
}

TEST(UserPlan, UnmanagedAclsAreDeletedOnlyWhenAsked) {
  const auto plan = plan_acls({}, {read_on("by-hand", authz::operation::write)}, {}, true);
  EXPECT_TRUE(plan.create.empty() && plan.unmanaged.empty());
  EXPECT_EQ(plan.remove, (std::vector{read_on("by-hand", authz::operation::write)}));
}

TEST(UserPlan, QuotasBecomeExactlyTheWantedOnes) {
  const auto plan = plan_quotas({{"producer_byte_rate", 2048}, {"request_percentage", 50}},
                                {{"producer_byte_rate", 1024}, {"request_percentage", 50}, {"consumer_byte_rate", 9}});
  EXPECT_EQ(plan.set, (std::map<std::string, double>{{"producer_byte_rate", 2048}}));
  EXPECT_EQ(plan.remove, (std::vector<std::string>{"consumer_byte_rate"}));
  EXPECT_TRUE(plan_quotas({{"producer_byte_rate", 1}}, {{"producer_byte_rate", 1}}).empty());
}

}  // namespace
}  // namespace ferry::users
