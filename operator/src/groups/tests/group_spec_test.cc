#include "groups/group_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ferry::groups {
namespace {

using json = nlohmann::json;

json resource(const json& spec) { return {{"metadata", {{"name", "orders-app"}}}, {"spec", spec}}; }

// A reset request of `topics` (a JSON array), named and bounded as the schema requires.
json reset_of(const std::string& topics, const std::string& request_id = "2026-12-01",
              const std::string& not_after = "2026-12-01T10:00:00Z") {
  return {{"requestId", request_id}, {"notAfter", not_after}, {"topics", json::parse(topics)}};
}

kube::system_time at(const std::string& time) { return *kube::parse_time(time); }

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
  const auto read = read_group_spec(resource({{"resetOffsets", reset_of(R"([
      {"topic": "a", "to": "earliest"}, {"topic": "b", "to": "latest"},
      {"topic": "c", "to": "timestamp", "timestamp": "2026-12-01T10:00:00Z"},
      {"topic": "d", "to": "offsets", "offsets": [{"partition": 1, "offset": 42}]}])")}}));
  ASSERT_TRUE(read.reset_error.empty()) << read.reset_error;
  EXPECT_TRUE(read.spec.asks_reset);
  EXPECT_EQ(read.spec.request_id, "2026-12-01");
  EXPECT_EQ(read.spec.not_after, at("2026-12-01T10:00:00Z"));
  ASSERT_EQ(read.spec.reset.size(), 4U);
  EXPECT_EQ(read.spec.reset[0].target, topic_reset::to::earliest);
  EXPECT_EQ(read.spec.reset[1].target, topic_reset::to::latest);
  EXPECT_EQ(read.spec.reset[2].timestamp_ms, 1'796'119'200'000);
  EXPECT_EQ(read.spec.reset[3].offsets.at(partition_id{1}), 42);
}

TEST(ReadGroupSpec, NamesWhatIsWrongWithAReset) {
  for (const auto* bad : {R"([])", R"([{"topic": "a", "to": "sideways"}])",
                          R"([{"topic": "a", "to": "timestamp", "timestamp": "yesterday"}])",
                          R"([{"topic": "a", "to": "offsets", "offsets": [{"partition": 0, "offset": -5}]}])"}) {
    const auto read = read_group_spec(resource({{"resetOffsets", reset_of(bad)}}));
    EXPECT_FALSE(read.reset_error.empty()) << bad;
    EXPECT_TRUE(read.spec.reset.empty()) << bad;
    EXPECT_EQ(read.spec.request_id, "2026-12-01") << "recorded with the refusal";
    EXPECT_EQ(read.spec.group_id, "orders-app") << "the group is still observed";
  }
}

TEST(ReadGroupSpec, AResetNeedsARequestIdAndNotAfter) {
  const auto topics = json::parse(R"([{"topic": "a", "to": "earliest"}])");
  for (const auto& [request, what] : std::vector<std::pair<json, std::string>>{
           {{{"topics", topics}, {"notAfter", "2026-12-01T10:00:00Z"}}, "requestId"},
           {{{"topics", topics}, {"requestId", ""}, {"notAfter", "2026-12-01T10:00:00Z"}}, "requestId"},
           {{{"topics", topics}, {"requestId", std::string(101, 'x')}, {"notAfter", "2026-12-01T10:00:00Z"}},
            "requestId"},
           {{{"topics", topics}, {"requestId", "r1"}}, "notAfter"},
           {{{"topics", topics}, {"requestId", "r1"}, {"notAfter", "tomorrow"}}, "notAfter"}}) {
    const auto read = read_group_spec(resource({{"resetOffsets", request}}));
    EXPECT_TRUE(read.spec.asks_reset);
    EXPECT_NE(read.reset_error.find("needs " + std::string(what == "requestId" ? "a requestId" : "notAfter")),
              std::string::npos)
        << request << ": " << read.reset_error;
    EXPECT_TRUE(read.spec.reset.empty()) << request;
  }
}

TEST(JudgeReset, ARequestIsAppliedBeforeItsDeadlineAndNotTooFarAhead) {
  const auto read = read_group_spec(resource({{"resetOffsets", reset_of(R"([{"topic": "a", "to": "latest"}])")}}));
  const reset_record none;
  EXPECT_EQ(judge_reset(read, none, 1, at("2026-12-01T09:59:59Z")).what, reset_verdict::step::apply);
  EXPECT_EQ(judge_reset(read, none, 1, at("2026-11-30T10:00:00Z")).what, reset_verdict::step::apply)
      << "24 h ahead at most";
  const auto far = judge_reset(read, none, 1, at("2026-11-30T09:59:59Z"));
  EXPECT_EQ(far.what, reset_verdict::step::refuse);
  EXPECT_NE(far.message.find("more than 24 h ahead"), std::string::npos) << far.message;
  EXPECT_EQ(judge_reset(read_group_spec(resource(json::object())), none, 1, at("2026-12-01T09:00:00Z")).what,
            reset_verdict::step::none);
}

TEST(JudgeReset, AnExpiredRequestIsNeverApplied) {
  const auto read = read_group_spec(resource({{"resetOffsets", reset_of(R"([{"topic": "a", "to": "earliest"}])")}}));
  for (const auto* now : {"2026-12-01T10:00:00Z", "2027-06-01T00:00:00Z"}) {
    const auto verdict = judge_reset(read, {}, 1, at(now));
    EXPECT_EQ(verdict.what, reset_verdict::step::expire) << now;
    EXPECT_NE(verdict.message.find("request 2026-12-01 expired at 2026-12-01T10:00:00Z"), std::string::npos)
        << verdict.message;
  }
}

TEST(JudgeReset, ARecordedRequestIdIsNeverJudgedAgain) {
  const auto read = read_group_spec(resource({{"resetOffsets", reset_of(R"([{"topic": "a", "to": "earliest"}])")}}));
  const auto now = at("2026-12-01T09:00:00Z");
  const auto recorded = read_reset_record(
      {{"status", {{"resetOffsets", {{"requestId", "2026-12-01"}, {"outcome", "Applied"}, {"generation", 1}}}}}});
  EXPECT_EQ(recorded.request_id, "2026-12-01");
  EXPECT_EQ(judge_reset(read, recorded, 1, now).what, reset_verdict::step::recorded);
  EXPECT_EQ(judge_reset(read, recorded, 7, now).what, reset_verdict::step::recorded)
      << "whatever else changed in the spec";
  EXPECT_EQ(judge_reset(read, {"2026-11-30", 1}, 1, now).what, reset_verdict::step::apply) << "another request";

  // Without an id (stored before ids were required, or applied by an operator that had none), the generation
  // tells: refused once per change of the spec, and an old applied reset stays quiet.
  const auto anonymous = read_group_spec(resource({{"resetOffsets", {{"topics", json::array()}}}}));
  EXPECT_EQ(judge_reset(anonymous, {"", 4}, 4, now).what, reset_verdict::step::recorded);
  EXPECT_EQ(judge_reset(anonymous, {"", 4}, 5, now).what, reset_verdict::step::refuse);
  EXPECT_EQ(judge_reset(anonymous, read_reset_record(resource(json::object())), 1, now).what,
            reset_verdict::step::refuse);
}

TEST(MarkedApplied, FindsTheRequestInAnyCommittedOffsetsMetadata) {
  std::map<topic_partition, committed_offset> committed = {{{"a", partition_id{0}}, {7, ""}},
                                                           {{"a", partition_id{1}}, {0, reset_marker("2026-12-01")}}};
  EXPECT_TRUE(marked_applied(committed, "2026-12-01")) << "a consumer committed over partition 0 only";
  EXPECT_FALSE(marked_applied(committed, "2026-12-0"));
  EXPECT_FALSE(marked_applied(committed, "2026-12-02"));
  committed[{"a", partition_id{1}}].metadata = "";
  EXPECT_FALSE(marked_applied(committed, "2026-12-01"));
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
  const std::map<topic_partition, committed_offset> committed = {
      {{"a", partition_id{0}}, {10, ""}}, {{"a", partition_id{1}}, {5, ""}}, {{"b", partition_id{0}}, {3, ""}}};
  const std::map<topic_partition, std::int64_t> ends = {{{"a", partition_id{0}}, 12}, {{"a", partition_id{1}}, 40}};
  const auto lag = summarize_lag(committed, ends);
  EXPECT_EQ(lag.total, 37);
  EXPECT_EQ(lag.partitions, 2U) << "b-0's end is unknown";
  ASSERT_TRUE(lag.worst);
  EXPECT_EQ(lag.worst->first, (topic_partition{"a", partition_id{1}}));
  EXPECT_EQ(lag.worst->second, 35);
  EXPECT_EQ(summarize_lag({{{"a", partition_id{0}}, {50, ""}}}, ends).total, 0) << "never negative";
}

}  // namespace
}  // namespace ferry::groups
