#include "groups/group_spec.h"

#include <gtest/gtest.h>

namespace ferry::groups {
namespace {

using json = nlohmann::json;

json resource(const json& spec) { return {{"metadata", {{"name", "orders-app"}}}, {"spec", spec}}; }

coord::cluster_view view_with(const std::string& topic, int partitions) {
  coord::cluster_view view;
  for (int p = 0; p < partitions; ++p) view.topics[topic].partitions[partition_id{p}] = {};
  return view;
}

TEST(ReadGroupSpec, GroupIdDefaultsToTheName) {
  const auto read = read_group_spec(resource(json::object()));
  EXPECT_EQ(read.spec.group_id, "orders-app");
  EXPECT_TRUE(read.spec.reset.empty());
  EXPECT_TRUE(read.reset_error.empty());
  EXPECT_EQ(read_group_spec(resource({{"groupId", "billing"}})).spec.group_id, "billing");
}

TEST(ReadGroupSpec, ReadsEveryKindOfReset) {
  const auto read = read_group_spec(resource(json::parse(R"({"resetOffsets": {"topics": [
      {"topic": "a", "to": "earliest"}, {"topic": "b", "to": "latest"},
      {"topic": "c", "to": "timestamp", "timestamp": "2026-12-01T10:00:00Z"},
      {"topic": "d", "to": "offsets", "offsets": [{"partition": 1, "offset": 42}]}]}})")));
  ASSERT_TRUE(read.reset_error.empty()) << read.reset_error;
  ASSERT_EQ(read.spec.reset.size(), 4U);
  EXPECT_EQ(read.spec.reset[0].target, topic_reset::to::earliest);
  EXPECT_EQ(read.spec.reset[1].target, topic_reset::to::latest);
  EXPECT_EQ(read.spec.reset[2].timestamp_ms, 1'796'119'200'000);
  EXPECT_EQ(read.spec.reset[3].offsets.at(partition_id{1}), 42);
}

TEST(ReadGroupSpec, NamesWhatIsWrongWithAReset) {
  for (const auto* bad :
       {R"({"topics": []})", R"({"topics": [{"topic": "a", "to": "sideways"}]})",
        R"({"topics": [{"topic": "a", "to": "timestamp", "timestamp": "yesterday"}]})",
        R"({"topics": [{"topic": "a", "to": "offsets", "offsets": [{"partition": 0, "offset": -5}]}]})"}) {
    const auto read = read_group_spec(resource({{"resetOffsets", json::parse(bad)}}));
    EXPECT_FALSE(read.reset_error.empty()) << bad;
    EXPECT_TRUE(read.spec.reset.empty()) << bad;
    EXPECT_EQ(read.spec.group_id, "orders-app") << "the group is still observed";
  }
}

TEST(PlanReset, AsksForEveryPartitionAndChecksExplicitOnes) {
  const auto view = view_with("a", 3);
  auto planned = plan_reset({{"a", topic_reset::to::earliest, 0, {}}}, view);
  ASSERT_TRUE(std::holds_alternative<reset_lookup>(planned));
  const auto& lookup = std::get<reset_lookup>(planned);
  EXPECT_EQ(lookup.timestamps.size(), 3U);
  EXPECT_EQ(lookup.timestamps.at({"a", partition_id{2}}), earliest_timestamp);

  planned = plan_reset({{"a", topic_reset::to::offsets, 0, {{partition_id{7}, 1}}}}, view);
  ASSERT_TRUE(std::holds_alternative<std::string>(planned));
  EXPECT_EQ(std::get<std::string>(planned), "topic a has no partition 7");
  planned = plan_reset({{"nope", topic_reset::to::latest, 0, {}}}, view);
  EXPECT_EQ(std::get<std::string>(planned), "topic nope does not exist");
}

TEST(SummarizeLag, TotalAndWorstPartition) {
  const std::map<topic_partition, std::int64_t> committed = {
      {{"a", partition_id{0}}, 10}, {{"a", partition_id{1}}, 5}, {{"b", partition_id{0}}, 3}};
  const std::map<topic_partition, std::int64_t> ends = {{{"a", partition_id{0}}, 12}, {{"a", partition_id{1}}, 40}};
  const auto lag = summarize_lag(committed, ends);
  EXPECT_EQ(lag.total, 37);
  EXPECT_EQ(lag.partitions, 2U) << "b-0's end is unknown";
  ASSERT_TRUE(lag.worst);
  EXPECT_EQ(lag.worst->first, (topic_partition{"a", partition_id{1}}));
  EXPECT_EQ(lag.worst->second, 35);
  EXPECT_EQ(summarize_lag({{{"a", partition_id{0}}, 50}}, ends).total, 0) << "never negative";
}

}  // namespace
}  // namespace ferry::groups
