#include "lag/consumer_lag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "model/testing/memory_coordinator_log.h"

namespace ferry::lag {
namespace {

constexpr std::int64_t now_ms = 1'700'000'000'000;

class fixed_watermarks final : public high_watermarks {
 public:
  [[nodiscard]] std::optional<offset> high_watermark(const topic_partition& partition) const override {
    const auto it = known.find(partition);
    return it == known.end() ? std::nullopt : std::optional(it->second);
  }
  std::map<topic_partition, offset> known;
};

const topic_partition t0{"t", partition_id{0}};
const topic_partition t1{"t", partition_id{1}};
const topic_partition t2{"t", partition_id{2}};
const topic_partition u0{"u", partition_id{0}};

class consumer_lag_test : public ::testing::Test {
 protected:
  consumer_lag_test() : coordinator_(config(), log_) {
    (void)coordinator_.lead({{0, leader_epoch{1}}});
    EXPECT_TRUE(coordinator_.load(0, now_ms));
  }
  static group::coordinator_config config() {
    group::coordinator_config c;
    c.offsets_partitions = 1;
    return c;
  }
  void commit(const std::string& group, const std::vector<std::pair<topic_partition, std::int64_t>>& offsets) {
    group::group_coordinator::commit_request r;
    for (const auto& [tp, o] : offsets) r.offsets.push_back({tp, {offset{o}, leader_epoch{-1}, "", now_ms, {}}});
    coordinator_.commit(group, std::move(r), now_ms, [](const std::vector<std::error_code>& errors) {
      for (const auto& e : errors) EXPECT_FALSE(e);
    });
  }

  model::testing::memory_coordinator_log log_;
  group::group_coordinator coordinator_;
  fixed_watermarks watermarks_;
  consumer_lag lag_{coordinator_, watermarks_};
};

// The value of the series of `family` whose labels include all of `labels`; nullopt when there is none.
std::optional<double> value_of(const std::vector<prometheus::MetricFamily>& families, const std::string& family,
                               const std::map<std::string, std::string>& labels) {
  for (const auto& f : families) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      std::size_t matched = 0;
      for (const auto& l : m.label)
        if (const auto it = labels.find(l.name); it != labels.end() && it->second == l.value) ++matched;
      if (matched == labels.size() && m.label.size() == labels.size())
        return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_F(consumer_lag_test, LagIsTheHighWatermarkMinusTheCommittedOffset) {
  commit("g", {{t0, 10}, {t1, 50}, {t2, 7}});
  watermarks_.known = {{t0, offset{25}}, {t1, offset{40}}};  // t1's read before its commit; t2's unknown

  const auto groups = lag_.groups();
  ASSERT_EQ(groups.size(), 1U);
  const auto& p = groups[0].partitions;
  ASSERT_EQ(p.size(), 3U);
  EXPECT_EQ(p[0].lag, 15);
  EXPECT_EQ(p[1].lag, 0) << "never negative";
  EXPECT_FALSE(p[2].lag) << "unknown with its high watermark";
  EXPECT_EQ(groups[0].total, 15);
  EXPECT_EQ(lag_.committed_partitions(), (std::set<topic_partition>{t0, t1, t2}));

  watermarks_.known[t0] = offset{10};
  EXPECT_EQ(lag_.groups()[0].partitions[0].lag, 0) << "caught up";
}

TEST_F(consumer_lag_test, ExportsKafkaExportersSeries) {
  commit("orders-app", {{t0, 10}, {t1, 20}, {u0, 5}});
  commit("idle", {{t2, 3}});
  watermarks_.known = {{t0, offset{12}}, {t1, offset{25}}, {u0, offset{5}}};

  const auto families = lag_.Collect();
  const std::map<std::string, std::string> g_t0{{"consumergroup", "orders-app"}, {"topic", "t"}, {"partition", "0"}};
  EXPECT_EQ(value_of(families, "kafka_consumergroup_current_offset", g_t0), 10);
  EXPECT_EQ(value_of(families, "kafka_consumergroup_lag", g_t0), 2);
  EXPECT_EQ(value_of(families, "kafka_consumergroup_lag_sum", {{"consumergroup", "orders-app"}, {"topic", "t"}}), 7);
  EXPECT_EQ(value_of(families, "kafka_consumergroup_lag_sum", {{"consumergroup", "orders-app"}, {"topic", "u"}}), 0);
  EXPECT_EQ(value_of(families, "kafka_consumergroup_members", {{"consumergroup", "orders-app"}}), 0);
  EXPECT_EQ(value_of(families, "ferry_consumergroup_state", {{"consumergroup", "orders-app"}, {"state", "Empty"}}), 1);

  const std::map<std::string, std::string> idle_t2{{"consumergroup", "idle"}, {"topic", "t"}, {"partition", "2"}};
  EXPECT_EQ(value_of(families, "kafka_consumergroup_current_offset", idle_t2), 3);
  EXPECT_FALSE(value_of(families, "kafka_consumergroup_lag", idle_t2)) << "no series while the lag is unknown";
}

// The commit counter counts the offsets written through this coordinator, one per partition of a commit, so
// rate() of it is the group's commit rate.
TEST_F(consumer_lag_test, CountsTheOffsetsTheGroupCommits) {
  commit("orders-app", {{t0, 10}, {t1, 20}});
  commit("orders-app", {{t0, 11}});
  commit("idle", {{t2, 3}});

  auto families = lag_.Collect();
  EXPECT_EQ(value_of(families, "ferry_consumergroup_offset_commits_total", {{"consumergroup", "orders-app"}}), 3);
  EXPECT_EQ(value_of(families, "ferry_consumergroup_offset_commits_total", {{"consumergroup", "idle"}}), 1);
  const auto it = std::find_if(families.begin(), families.end(), [](const prometheus::MetricFamily& f) {
    return f.name == "ferry_consumergroup_offset_commits_total";
  });
  ASSERT_NE(it, families.end());
  EXPECT_EQ(it->type, prometheus::MetricType::Counter);

  commit("idle", {{t2, 4}, {u0, 1}});
  families = lag_.Collect();
  EXPECT_EQ(value_of(families, "ferry_consumergroup_offset_commits_total", {{"consumergroup", "idle"}}), 3);
}

TEST_F(consumer_lag_test, AGroupWithMembersShowsThemAndItsState) {
  group::join_request join;
  join.client_id = "c";
  join.session_timeout_ms = 10000;
  join.rebalance_timeout_ms = 10000;
  join.protocol_type = "consumer";
  join.protocols.push_back({"range", {}});
  bool joined = false;
  coordinator_.join("g", join, now_ms, [&](const group::join_result& r) { joined = !r.error; });
  coordinator_.tick(now_ms + 5000);  // past group.initial.rebalance.delay.ms
  ASSERT_TRUE(joined);

  const auto families = lag_.Collect();
  EXPECT_EQ(value_of(families, "kafka_consumergroup_members", {{"consumergroup", "g"}}), 1);
  EXPECT_EQ(value_of(families, "ferry_consumergroup_state", {{"consumergroup", "g"}, {"state", "CompletingRebalance"}}),
            1);
  EXPECT_FALSE(value_of(families, "ferry_consumergroup_state", {{"consumergroup", "g"}, {"state", "Empty"}}))
      << "one series per group";
}

}  // namespace ferry::lag
