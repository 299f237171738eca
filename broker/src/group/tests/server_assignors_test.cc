#include "group/server_assignors.h"

#include <gtest/gtest.h>

namespace ferry::group {
namespace {

constexpr topic_uuid t1{1};
constexpr topic_uuid t2{2};

assignor_member subscriber(std::string id, std::set<topic_uuid> topics, topic_id_partitions current = {},
                           std::optional<std::string> instance = std::nullopt) {
  return {std::move(id), std::move(instance), std::move(topics), std::move(current)};
}

std::size_t count(const topic_id_partitions& a) {
  std::size_t n = 0;
  for (const auto& [t, ps] : a) n += ps.size();
  return n;
}

// Every partition of every topic exactly once.
void expect_complete(const target_assignment& out, const topic_partition_counts& topics) {
  std::map<topic_uuid, std::multiset<std::int32_t>> seen;
  for (const auto& [member, a] : out)
    for (const auto& [t, ps] : a) seen[t].insert(ps.begin(), ps.end());
  for (const auto& [t, n] : topics) {
    std::multiset<std::int32_t> all;
    for (std::int32_t p = 0; p < n; ++p) all.insert(p);
    EXPECT_EQ(seen[t], all);
  }
}

}  // namespace

TEST(UniformAssignor, BalancesWithinOneAndKeepsWhatMembersHad) {
  const topic_partition_counts topics{{t1, 6}};
  auto out = assign_uniform({subscriber("a", {t1}), subscriber("b", {t1}), subscriber("c", {t1})}, topics);
  expect_complete(out, topics);
  for (const auto& [m, a] : out) EXPECT_EQ(count(a), 2U) << m;

  // A fourth member takes one partition from two of the others; nobody else's change.
  std::vector<assignor_member> four;
  for (const auto& [m, a] : out) four.push_back(subscriber(m, {t1}, a));
  four.push_back(subscriber("d", {t1}));
  const auto next = assign_uniform(four, topics);
  expect_complete(next, topics);
  std::size_t moved = 0;
  for (const auto& [m, a] : out) {
    EXPECT_GE(count(next.at(m)), 1U);
    for (const auto p : a.at(t1)) moved += next.at(m).contains(t1) && next.at(m).at(t1).contains(p) ? 0 : 1;
  }
  EXPECT_EQ(moved, count(next.at("d"))) << "only what the new member gets moves";
  for (const auto& [m, a] : next) {
    EXPECT_GE(count(a), 1U) << m;
    EXPECT_LE(count(a), 2U) << m;
  }
}

TEST(UniformAssignor, HeterogeneousSubscriptionsStayBalancedPerTopic) {
  const topic_partition_counts topics{{t1, 4}, {t2, 4}};
  const auto out = assign_uniform({subscriber("a", {t1}), subscriber("b", {t1, t2}), subscriber("c", {t2})}, topics);
  expect_complete(out, topics);
  EXPECT_FALSE(out.at("a").contains(t2));
  EXPECT_FALSE(out.at("c").contains(t1));
  for (const auto& [m, a] : out) EXPECT_LE(count(a), 3U) << m;
  for (const auto& [m, a] : out) EXPECT_GE(count(a), 2U) << m;
}

TEST(UniformAssignor, DropsTopicsNoLongerSubscribedAndPartitionsThatAreGone) {
  const topic_partition_counts topics{{t1, 2}};
  const auto out = assign_uniform({subscriber("a", {t1}, {{t1, {0, 1, 5}}, {t2, {0}}}), subscriber("b", {t1})}, topics);
  expect_complete(out, topics);
  EXPECT_EQ(count(out.at("a")), 1U);
  EXPECT_EQ(count(out.at("b")), 1U);
}

TEST(RangeAssignor, GivesConsecutiveRangesStaticMembersFirst) {
  const topic_partition_counts topics{{t1, 7}};
  const auto out =
      assign_range({subscriber("a", {t1}), subscriber("z", {t1}, {}, "instance-1"), subscriber("b", {t1})}, topics);
  EXPECT_EQ(out.at("z").at(t1), (std::set<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(out.at("a").at(t1), (std::set<std::int32_t>{3, 4}));
  EXPECT_EQ(out.at("b").at(t1), (std::set<std::int32_t>{5, 6}));
}

TEST(RangeAssignor, CoPartitionsTopicsWithTheSameSubscribers) {
  const topic_partition_counts topics{{t1, 4}, {t2, 4}};
  const auto out = assign_range({subscriber("a", {t1, t2}), subscriber("b", {t1, t2})}, topics);
  EXPECT_EQ(out.at("a").at(t1), out.at("a").at(t2));
  EXPECT_EQ(out.at("b").at(t1), out.at("b").at(t2));
  const auto more_members =
      assign_range({subscriber("a", {t1}), subscriber("b", {t1}), subscriber("c", {t1})}, {{t1, 2}});
  EXPECT_TRUE(more_members.at("c").empty()) << "a member beyond the partition count gets nothing";
}

}  // namespace ferry::group
