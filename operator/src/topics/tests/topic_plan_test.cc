#include "topics/topic_plan.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ferry::topics {
namespace {

using json = nlohmann::json;

json resource(json spec) {
  return {{"metadata", {{"name", "orders"}, {"namespace", "shop"}}}, {"spec", std::move(spec)}};
}

coord::cluster_view cluster(int brokers, bool racks = true) {
  coord::cluster_view view;
  for (int i = 0; i < brokers; ++i) {
    coord::broker_info b;
    b.id = broker_id{i};
    if (racks) b.rack = "zone-" + std::to_string(i % 3);
    view.brokers.emplace(b.id, b);
  }
  return view;
}

coord::topic_info live_topic(const std::vector<std::vector<int>>& replicas) {
  coord::topic_info topic;
  for (std::size_t p = 0; p < replicas.size(); ++p) {
    coord::partition_info partition;
    for (const int r : replicas[p]) partition.replicas.push_back(broker_id{r});
    partition.state = coord::partition_state{partition.replicas.front(), leader_epoch{0}, partition.replicas};
    topic.partitions.emplace(partition_id{static_cast<std::int32_t>(p)}, partition);
  }
  return topic;
}

topic_spec spec_of(const json& r) {
  auto read = read_spec(r);
  EXPECT_TRUE(std::holds_alternative<topic_spec>(read));
  return std::get<topic_spec>(read);
}

TEST(ReadSpec, RefusesInternalTopics) {
  for (const auto* name : {"__consumer_offsets", "__transaction_state", "__anything"}) {
    const auto read = read_spec(resource({{"topicName", name}, {"partitions", 1}, {"replicationFactor", 1}}));
    ASSERT_TRUE(std::holds_alternative<refusal>(read)) << name;
    EXPECT_EQ(std::get<refusal>(read).reason, "NotSupported");
    EXPECT_NE(std::get<refusal>(read).message.find("internal"), std::string::npos);
  }
  EXPECT_TRUE(std::holds_alternative<topic_spec>(
      read_spec(resource({{"topicName", "_single"}, {"partitions", 1}, {"replicationFactor", 1}}))));
}

TEST(ReadSpec, DefaultsTheNameAndChecksConfigs) {
  const auto spec =
      spec_of(resource({{"partitions", 3}, {"replicationFactor", 2}, {"config", {{"retention.ms", "1000"}}}}));
  EXPECT_EQ(spec.name, "orders");
  EXPECT_EQ(spec.partitions, 3);
  EXPECT_EQ(spec.config.at("retention.ms"), "1000");
  EXPECT_EQ(spec_of(resource({{"topicName", "Orders_V2"}, {"partitions", 1}, {"replicationFactor", 1}})).name,
            "Orders_V2");
}

TEST(ReadSpec, RefusesBadNamesCountsAndConfigs) {
  const auto reason = [](const json& spec) {
    const auto read = read_spec(resource(spec));
    return std::holds_alternative<refusal>(read) ? std::get<refusal>(read).reason : std::string("accepted");
  };
  EXPECT_EQ(reason({{"topicName", "bad/name"}, {"partitions", 1}, {"replicationFactor", 1}}), "InvalidConfig");
  EXPECT_EQ(reason({{"partitions", 0}, {"replicationFactor", 1}}), "InvalidConfig");
  EXPECT_EQ(reason({{"partitions", 1}}), "InvalidConfig");
  EXPECT_EQ(reason({{"partitions", 1}, {"replicationFactor", 1}, {"config", {{"retention.ms", "soon"}}}}),
            "InvalidConfig");
  EXPECT_EQ(reason({{"partitions", 1}, {"replicationFactor", 1}, {"config", {{"no.such.config", "1"}}}}),
            "InvalidConfig");
}

TEST(ReadSpec, ScalarConfigValuesBecomeKafkasStrings) {
  const auto config_of = [](const json& config) {
    return spec_of(resource({{"partitions", 1}, {"replicationFactor", 1}, {"config", config}})).config;
  };
  EXPECT_EQ(config_of({{"retention.ms", 604800000},
                       {"segment.bytes", 1073741824U},
                       {"unclean.leader.election.enable", true},
                       {"min.cleanable.dirty.ratio", 0.5},
                       {"segment.ms", 6.048e8},
                       {"retention.bytes", -1},
                       {"cleanup.policy", "compact"}}),
            (coord::layout::config_map{{"retention.ms", "604800000"},
                                       {"segment.bytes", "1073741824"},
                                       {"unclean.leader.election.enable", "true"},
                                       {"min.cleanable.dirty.ratio", "0.5"},
                                       {"segment.ms", "604800000"},
                                       {"retention.bytes", "-1"},
                                       {"cleanup.policy", "compact"}}));
  EXPECT_EQ(config_of({{"unclean.leader.election.enable", false}}).at("unclean.leader.election.enable"), "false");
  EXPECT_EQ(config_of({{"min.cleanable.dirty.ratio", 1.0}}).at("min.cleanable.dirty.ratio"), "1");
}

TEST(ReadSpec, RefusesListObjectAndNullConfigValuesNamingTheKey) {
  for (const auto& [value, kind] : std::vector<std::pair<json, std::string>>{
           {json::array({"compact", "delete"}), "a list"}, {json{{"ms", 1}}, "an object"}, {nullptr, "null"}}) {
    const auto read =
        read_spec(resource({{"partitions", 1}, {"replicationFactor", 1}, {"config", {{"cleanup.policy", value}}}}));
    ASSERT_TRUE(std::holds_alternative<refusal>(read)) << kind;
    EXPECT_EQ(std::get<refusal>(read).reason, "InvalidConfig");
    EXPECT_EQ(std::get<refusal>(read).message,
              "spec.config.cleanup.policy must be a string, a number or a boolean, not " + kind);
  }
  // A number of the wrong kind for the key is refused by the brokers' own check.
  const auto read =
      read_spec(resource({{"partitions", 1}, {"replicationFactor", 1}, {"config", {{"retention.ms", 0.5}}}}));
  ASSERT_TRUE(std::holds_alternative<refusal>(read));
  EXPECT_NE(std::get<refusal>(read).message.find("retention.ms"), std::string::npos);
}

TEST(PlanChanges, ANewTopicIsPlacedOnePartitionPerRackWithLeadersSpread) {
  const auto view = cluster(3);
  const auto planned = plan_changes(spec_of(resource({{"partitions", 6}, {"replicationFactor", 3}})), nullptr, view, 0);
  ASSERT_TRUE(std::holds_alternative<topic_changes>(planned));
  const auto& changes = std::get<topic_changes>(planned);
  ASSERT_TRUE(changes.create);
  ASSERT_EQ(changes.assignment->size(), 6U);
  std::map<broker_id, int> leaders;
  for (const auto& [p, replicas] : *changes.assignment) {
    ASSERT_EQ(replicas.size(), 3U);
    EXPECT_EQ(std::set<broker_id>(replicas.begin(), replicas.end()).size(), 3U);
    ++leaders[replicas.front()];
  }
  for (const auto& [b, n] : leaders) EXPECT_EQ(n, 2) << "broker " << b;
}

TEST(PlanChanges, RefusesMoreReplicasThanBrokers) {
  const auto planned =
      plan_changes(spec_of(resource({{"partitions", 1}, {"replicationFactor", 4}})), nullptr, cluster(3), 0);
  ASSERT_TRUE(std::holds_alternative<refusal>(planned));
  EXPECT_EQ(std::get<refusal>(planned).reason, "InsufficientBrokers");
}

TEST(PlanChanges, GrowsAndRefusesToShrink) {
  const auto view = cluster(3);
  const auto live = live_topic({{0, 1}, {1, 2}});
  const auto grown = plan_changes(spec_of(resource({{"partitions", 4}, {"replicationFactor", 2}})), &live, view, 0);
  ASSERT_TRUE(std::holds_alternative<topic_changes>(grown));
  const auto& assignment = *std::get<topic_changes>(grown).assignment;
  ASSERT_EQ(assignment.size(), 4U);
  EXPECT_EQ(assignment.at(partition_id{0}), live.partitions.at(partition_id{0}).replicas) << "existing ones stay";
  EXPECT_FALSE(std::get<topic_changes>(grown).create);

  const auto shrunk = plan_changes(spec_of(resource({{"partitions", 1}, {"replicationFactor", 2}})), &live, view, 0);
  ASSERT_TRUE(std::holds_alternative<refusal>(shrunk));
  EXPECT_EQ(std::get<refusal>(shrunk).reason, "NotSupported");
}

TEST(PlanChanges, ReplacesConfigThatDiffersAndNothingElse) {
  const auto view = cluster(3);
  auto live = live_topic({{0, 1}});
  live.config = {{"retention.ms", "5"}};
  const auto spec =
      spec_of(resource({{"partitions", 1}, {"replicationFactor", 2}, {"config", {{"retention.ms", "9"}}}}));
  const auto planned = std::get<topic_changes>(plan_changes(spec, &live, view, 0));
  ASSERT_TRUE(planned.config);
  EXPECT_EQ(planned.config->at("retention.ms"), "9");
  EXPECT_FALSE(planned.assignment);
  EXPECT_TRUE(planned.moves.empty());
  live.config = spec.config;
  EXPECT_TRUE(std::get<topic_changes>(plan_changes(spec, &live, view, 0)).empty());
}

TEST(PlanChanges, ARunningReassignmentBlocksOnlyReplicationChanges) {
  const auto view = cluster(3);
  auto live = live_topic({{0, 1}, {1, 2}});
  live.partitions.at(partition_id{0}).replicas = {broker_id{2}, broker_id{1}, broker_id{0}};
  live.partitions.at(partition_id{0}).adding = {broker_id{2}};
  live.partitions.at(partition_id{0}).removing = {broker_id{0}};
  const auto same = plan_changes(spec_of(resource({{"partitions", 3}, {"replicationFactor", 2}})), &live, view, 0);
  ASSERT_TRUE(std::holds_alternative<topic_changes>(same)) << "growing does not wait for a rebalance";
  EXPECT_TRUE(std::get<topic_changes>(same).moves.empty());
  const auto more = plan_changes(spec_of(resource({{"partitions", 2}, {"replicationFactor", 3}})), &live, view, 0);
  ASSERT_TRUE(std::holds_alternative<refusal>(more));
  EXPECT_EQ(std::get<refusal>(more).reason, "ReassignmentInProgress");
}

TEST(ReplicationMoves, AddsReplicasOnUnusedRacksAndKeepsThePreferredLeader) {
  const auto view = cluster(6);  // racks: 0,3 -> zone-0; 1,4 -> zone-1; 2,5 -> zone-2
  const auto live = live_topic({{0, 3}, {1, 2, 4}});
  const auto moves = replication_moves(live, view, 2);
  ASSERT_TRUE(moves);
  // Partition 0 grows? No: it has 2. Partition 1 shrinks to its first two.
  ASSERT_EQ(moves->size(), 1U);
  EXPECT_EQ(moves->at(partition_id{1}), (std::vector<broker_id>{broker_id{1}, broker_id{2}}));

  const auto grown = replication_moves(live, view, 3);
  ASSERT_TRUE(grown);
  const auto& p0 = grown->at(partition_id{0});
  ASSERT_EQ(p0.size(), 3U);
  EXPECT_EQ(p0[0], broker_id{0});
  EXPECT_TRUE(p0[2] == broker_id{1} || p0[2] == broker_id{2} || p0[2] == broker_id{4} || p0[2] == broker_id{5})
      << "the new replica goes to a rack partition 0 does not use";
  EXPECT_FALSE(replication_moves(live, view, 7)) << "7 replicas need 7 brokers";
}

TEST(Summarize, CountsOfflinePartitionsButNotIsrChanges) {
  auto live = live_topic({{0, 1}, {1, 0}, {0, 1}});
  const auto before = summarize(live);
  live.partitions.at(partition_id{1}).state->isr = {broker_id{1}};
  live.partitions.at(partition_id{0}).state->leader = broker_id{1};
  EXPECT_EQ(summarize(live), before) << "ISR and leader changes leave the status alone";
  live.partitions.at(partition_id{2}).state->leader = no_broker;
  const auto summary = summarize(live);
  EXPECT_EQ(summary.count, 3);
  EXPECT_EQ(summary.offline, 1);
}

TEST(PlanChanges, RefusesFewerReplicasThanMinInsyncReplicas) {
  const auto own = plan_changes(
      spec_of(resource({{"partitions", 1}, {"replicationFactor", 1}, {"config", {{"min.insync.replicas", "2"}}}})),
      nullptr, cluster(3), 0);
  ASSERT_TRUE(std::holds_alternative<refusal>(own));
  EXPECT_EQ(std::get<refusal>(own).reason, "InvalidConfig");
  EXPECT_NE(std::get<refusal>(own).message.find("min.insync.replicas 2"), std::string::npos);

  auto view = cluster(3);
  view.broker_configs["<default>"] = {{"min.insync.replicas", "3"}};
  const auto spec = spec_of(resource({{"partitions", 1}, {"replicationFactor", 2}}));
  EXPECT_TRUE(std::holds_alternative<refusal>(plan_changes(spec, nullptr, view, 0)));
  EXPECT_TRUE(std::holds_alternative<topic_changes>(plan_changes(spec, nullptr, cluster(3), 0)));
}

TEST(PlanChanges, ThrottleAndUnmanagedKeysKeepTheirLiveValues) {
  auto live = live_topic({{0, 1}});
  live.config = {{"retention.ms", "1000"},
                 {"leader.replication.throttled.replicas", "0:0"},
                 {"follower.replication.throttled.replicas", "0:1"},
                 {"segment.bytes", "1048576"},
                 {"cleanup.policy", "compact"}};
  auto spec = spec_of(resource({{"partitions", 1}, {"replicationFactor", 2}, {"config", {{"retention.ms", "2000"}}}}));
  spec.unmanaged_config = {"segment.bytes"};
  const auto planned = plan_changes(spec, &live, cluster(3), 0);
  ASSERT_TRUE(std::holds_alternative<topic_changes>(planned));
  const auto& config = std::get<topic_changes>(planned).config;
  ASSERT_TRUE(config);
  EXPECT_EQ(*config, (coord::layout::config_map{{"retention.ms", "2000"},
                                                {"leader.replication.throttled.replicas", "0:0"},
                                                {"follower.replication.throttled.replicas", "0:1"},
                                                {"segment.bytes", "1048576"}}))
      << "cleanup.policy is managed and removed; the throttles and segment.bytes stay";
}

TEST(ReadSpec, UnmanagedConfigKeys) {
  EXPECT_EQ(spec_of(resource({{"partitions", 1}, {"replicationFactor", 1}, {"unmanagedConfigKeys", {"retention.ms"}}}))
                .unmanaged_config,
            (std::set<std::string>{"retention.ms"}));
  const auto both = read_spec(resource({{"partitions", 1},
                                        {"replicationFactor", 1},
                                        {"config", {{"retention.ms", "1"}}},
                                        {"unmanagedConfigKeys", {"retention.ms"}}}));
  ASSERT_TRUE(std::holds_alternative<refusal>(both));
  EXPECT_EQ(std::get<refusal>(both).reason, "InvalidConfig");
}

TEST(PlanChanges, ARunningBatchDoesNotStopTheNextOne) {
  auto live = live_topic({{0}, {1}, {2}});
  // Partition 0 is already moving to two replicas; 1 and 2 still need theirs.
  live.partitions.at(partition_id{0}).adding = {broker_id{1}};
  live.partitions.at(partition_id{0}).replicas = {broker_id{0}, broker_id{1}};
  const auto planned =
      plan_changes(spec_of(resource({{"partitions", 3}, {"replicationFactor", 2}})), &live, cluster(3), 0);
  ASSERT_TRUE(std::holds_alternative<topic_changes>(planned));
  const auto& moves = std::get<topic_changes>(planned).moves;
  EXPECT_EQ(moves.size(), 2U);
  EXPECT_FALSE(moves.contains(partition_id{0}));
  EXPECT_EQ(pending_replication_moves(live, 2), 2);
}

}  // namespace
}  // namespace ferry::topics
