#include "group/consumer_group.h"

#include <gtest/gtest.h>

#include "group/errc.h"
#include "group/group_coordinator.h"
#include "model/testing/memory_coordinator_log.h"

namespace ferry::group {
namespace {

constexpr std::int64_t now_ms = 1'700'000'000'000;
constexpr topic_uuid topic_id{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
constexpr std::int32_t partitions = 6;

using memory_log = model::testing::memory_coordinator_log;

std::unique_ptr<group_coordinator> loaded(memory_log& log) {
  coordinator_config config;
  config.offsets_partitions = 1;
  config.consumer.session_timeout_ms = 10000;
  auto c = std::make_unique<group_coordinator>(config, log);
  (void)c->lead({{0, leader_epoch{1}}});
  EXPECT_TRUE(c->load(0, now_ms));
  return c;
}

topic_lookup one_topic(std::int32_t count = partitions) {
  return [count](const std::string& name) -> std::optional<topic_metadata> {
    if (name != "t") return std::nullopt;
    return topic_metadata{topic_id, count};
  };
}

consumer_heartbeat_request join(const std::string& member, std::optional<std::string> instance = std::nullopt) {
  consumer_heartbeat_request r;
  r.member_id = member;
  r.member_epoch = 0;
  r.instance_id = std::move(instance);
  r.rebalance_timeout_ms = 30000;
  r.subscribed_topic_names = std::vector<std::string>{"t"};
  r.owned = topic_id_partitions{};
  return r;
}

consumer_heartbeat_request beat(const std::string& member, std::int32_t epoch,
                                std::optional<topic_id_partitions> owned = std::nullopt) {
  consumer_heartbeat_request r;
  r.member_id = member;
  r.member_epoch = epoch;
  r.owned = std::move(owned);
  return r;
}

std::set<std::int32_t> of(const std::optional<topic_id_partitions>& a) {
  if (!a || !a->contains(topic_id)) return {};
  return a->at(topic_id);
}

topic_id_partitions owning(const std::set<std::int32_t>& ps) {
  topic_id_partitions out;
  if (!ps.empty()) out[topic_id] = ps;
  return out;
}

class ConsumerGroupTest : public ::testing::Test {
 protected:
  consumer_heartbeat_result send(const consumer_heartbeat_request& r, std::int64_t at = now_ms,
                                 const topic_lookup& topics = one_topic()) {
    std::optional<consumer_heartbeat_result> out;
    coordinator_->consumer_heartbeat("g", r, topics, at, [&](consumer_heartbeat_result x) { out = std::move(x); });
    EXPECT_TRUE(out.has_value());
    return out.value_or(consumer_heartbeat_result{});
  }
  group_state state() { return coordinator_->describe_consumer_group("g").value().state; }

  // Two members sharing the topic, both stable: returns their partitions.
  std::pair<std::set<std::int32_t>, std::set<std::int32_t>> two_stable() {
    const auto a = send(join("a"));
    EXPECT_EQ(of(a.assignment).size(), static_cast<std::size_t>(partitions));
    const auto b = send(join("b"));
    EXPECT_FALSE(b.error);
    auto a2 = send(beat("a", a.member_epoch, a.assignment));  // told to give some up
    EXPECT_EQ(a2.member_epoch, a.member_epoch) << "a keeps its epoch while it revokes";
    const auto kept = of(a2.assignment);
    EXPECT_EQ(kept.size(), 3U);
    a2 = send(beat("a", a2.member_epoch, owning(kept)));  // revoked
    EXPECT_EQ(a2.member_epoch, b.member_epoch);
    const auto b2 = send(beat("b", b.member_epoch, owning({})));
    EXPECT_EQ(state(), group_state::stable);
    return {kept, of(b2.assignment)};
  }

  memory_log log_;
  std::unique_ptr<group_coordinator> coordinator_ = loaded(log_);
};

}  // namespace

TEST_F(ConsumerGroupTest, TheFirstMemberGetsEveryPartition) {
  const auto a = send(join("a"));
  ASSERT_FALSE(a.error) << a.error.message();
  EXPECT_EQ(a.member_id, "a");
  EXPECT_EQ(a.member_epoch, 1);
  EXPECT_EQ(of(a.assignment), (std::set<std::int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(state(), group_state::stable);
  // A plain heartbeat changes nothing and carries no assignment.
  const auto again = send(beat("a", 1));
  EXPECT_EQ(again.member_epoch, 1);
  EXPECT_FALSE(again.assignment.has_value());
}

TEST_F(ConsumerGroupTest, ANewMemberGetsPartitionsOnlyOnceTheirOwnerRevokedThem) {
  const auto a = send(join("a"));
  const auto b = send(join("b"));
  EXPECT_EQ(b.member_epoch, 2);
  EXPECT_TRUE(of(b.assignment).empty()) << "a still owns everything";
  EXPECT_EQ(state(), group_state::reconciling);
  // b asks again before a revoked: still nothing.
  EXPECT_TRUE(of(send(beat("b", 2, owning({}))).assignment).empty());
  const auto [kept, given] = [&] {
    auto a2 = send(beat("a", 1, a.assignment));
    const auto k = of(a2.assignment);
    a2 = send(beat("a", 1, owning(k)));
    EXPECT_EQ(a2.member_epoch, 2);
    return std::pair{k, of(send(beat("b", 2, owning({}))).assignment)};
  }();
  EXPECT_EQ(kept.size(), 3U);
  EXPECT_EQ(given.size(), 3U);
  std::set<std::int32_t> all = kept;
  all.insert(given.begin(), given.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(partitions));
  EXPECT_EQ(state(), group_state::stable);
}

TEST_F(ConsumerGroupTest, AnExpiredSessionFencesTheMemberAndItsPartitionsMove) {
  const auto [a_parts, b_parts] = two_stable();
  // b keeps heartbeating; a goes quiet past the session timeout.
  const auto later = now_ms + 6000;
  (void)send(beat("b", 2), later);
  coordinator_->tick(now_ms + 10001);
  const auto d = coordinator_->describe_consumer_group("g").value();
  ASSERT_EQ(d.members.size(), 1U);
  EXPECT_EQ(d.members[0].member_id, "b");
  EXPECT_EQ(send(beat("a", 2), now_ms + 10002).error, errc::unknown_member_id);
  // The fence bumped the epoch; b's next heartbeat assigns it everything at once (the partitions are free).
  const auto b = send(beat("b", 2, owning(b_parts)), now_ms + 10002);
  EXPECT_EQ(b.member_epoch, 3);
  EXPECT_EQ(of(b.assignment).size(), static_cast<std::size_t>(partitions));
}

TEST_F(ConsumerGroupTest, AMemberThatDoesNotRevokeWithinItsRebalanceTimeoutIsFenced) {
  const auto a = send(join("a"));
  const auto b = send(join("b"));
  // a heartbeats on but keeps every partition; its rebalance timeout is 30 s.
  for (std::int64_t t = 0; t <= 30000; t += 5000) {
    EXPECT_FALSE(send(beat("a", a.member_epoch, a.assignment), now_ms + t).error);
    EXPECT_FALSE(send(beat("b", b.member_epoch, owning({})), now_ms + t).error);
    coordinator_->tick(now_ms + t);
  }
  coordinator_->tick(now_ms + 30001);
  EXPECT_EQ(send(beat("a", a.member_epoch), now_ms + 30002).error, errc::unknown_member_id);
  EXPECT_EQ(of(send(beat("b", b.member_epoch, owning({})), now_ms + 30002).assignment).size(),
            static_cast<std::size_t>(partitions));
}

TEST_F(ConsumerGroupTest, EpochsAreChecked) {
  EXPECT_EQ(send(beat("a", 1)).error, errc::group_id_not_found);
  const auto a = send(join("a"));
  EXPECT_EQ(send(beat("a", 5)).error, errc::fenced_member_epoch);
  EXPECT_EQ(send(beat("x", 1)).error, errc::unknown_member_id);
  // A fenced client rejoins with epoch 0 and its own id, and goes on where it was.
  const auto rejoined = send(join("a"));
  EXPECT_FALSE(rejoined.error);
  EXPECT_EQ(rejoined.member_epoch, a.member_epoch);
  EXPECT_EQ(of(rejoined.assignment), of(a.assignment));
}

TEST_F(ConsumerGroupTest, RequestsThatBreakTheProtocolAreRefused) {
  auto r = join("a");
  r.rebalance_timeout_ms = -1;
  EXPECT_EQ(send(r).error, errc::invalid_request);
  r = join("a");
  r.owned = owning({1});
  EXPECT_EQ(send(r).error, errc::invalid_request);
  r = join("a");
  r.server_assignor = "sticky";
  const auto refused = send(r);
  EXPECT_EQ(refused.error, errc::unsupported_assignor);
  EXPECT_NE(refused.error_message.find("uniform"), std::string::npos);
  EXPECT_EQ(send(beat("a", -3)).error, errc::invalid_request);
  r = join("a");
  r.subscribed_topic_regex = "orders-(";
  const auto bad_regex = send(r);
  EXPECT_EQ(bad_regex.error, errc::invalid_regular_expression);
  EXPECT_NE(bad_regex.error_message.find("orders-("), std::string::npos);
  EXPECT_FALSE(coordinator_->describe_consumer_group("g")) << "a refused join leaves no group behind";
}

TEST_F(ConsumerGroupTest, ALeavingMemberBumpsTheEpochAndTheOthersTakeOver) {
  const auto [a_parts, b_parts] = two_stable();
  const auto left = send(beat("a", -1));
  EXPECT_FALSE(left.error);
  EXPECT_EQ(left.member_epoch, -1);
  const auto b = send(beat("b", 2, owning(b_parts)));
  EXPECT_EQ(of(b.assignment).size(), static_cast<std::size_t>(partitions));
  (void)send(beat("b", -1));
  EXPECT_EQ(state(), group_state::empty);
}

TEST_F(ConsumerGroupTest, AStaticMemberBackUnderANewIdGetsItsPartitionsAtOnce) {
  const auto a = send(join("a1", "instance-a"));
  const auto b = send(join("b", "instance-b"));
  const auto kept = of(send(beat("a1", a.member_epoch, a.assignment)).assignment);
  ASSERT_EQ(kept.size(), 3U);
  (void)send(beat("a1", a.member_epoch, owning(kept)));
  // A second process with the same instance id while the first is active is refused.
  EXPECT_EQ(send(join("a2", "instance-a")).error, errc::unreleased_instance_id);
  auto leave = beat("a1", -2);
  leave.instance_id = "instance-a";
  EXPECT_EQ(send(leave).member_epoch, -2);
  const auto epoch = coordinator_->describe_consumer_group("g").value().group_epoch;
  const auto back = send(join("a2", "instance-a"));
  ASSERT_FALSE(back.error) << back.error_message;
  EXPECT_EQ(of(back.assignment), kept);
  EXPECT_EQ(coordinator_->describe_consumer_group("g").value().group_epoch, epoch) << "no rebalance";
  (void)b;
}

TEST_F(ConsumerGroupTest, ANewCoordinatorReadsTheGroupBack) {
  const auto [a_parts, b_parts] = two_stable();
  const auto before = coordinator_->describe_consumer_group("g").value();
  auto next = loaded(log_);
  const auto after = next->describe_consumer_group("g");
  ASSERT_TRUE(after);
  EXPECT_EQ(after.value().group_epoch, before.group_epoch);
  EXPECT_EQ(after.value().assignment_epoch, before.assignment_epoch);
  ASSERT_EQ(after.value().members.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(after.value().members[i].member_id, before.members[i].member_id);
    EXPECT_EQ(after.value().members[i].member_epoch, before.members[i].member_epoch);
    EXPECT_EQ(after.value().members[i].assignment, before.members[i].assignment);
  }
  // The members go on with their partitions.
  std::optional<consumer_heartbeat_result> a;
  next->consumer_heartbeat("g", beat("a", 2, owning(a_parts)), one_topic(), now_ms,
                           [&](consumer_heartbeat_result r) { a = std::move(r); });
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->error);
  EXPECT_EQ(of(next->describe_consumer_group("g").value().members[0].assignment), a_parts);
}

TEST_F(ConsumerGroupTest, CommitsAndFetchesNeedTheCurrentEpoch) {
  const auto a = send(join("a"));
  const auto commit = [&](const std::string& member, std::int32_t epoch) {
    group_coordinator::commit_request r;
    r.member_id = member;
    r.generation = epoch;
    r.offsets.push_back(
        {topic_partition{"t", partition_id{0}}, committed_offset{offset{5}, leader_epoch{1}, "", now_ms, {}}});
    std::vector<std::error_code> out;
    coordinator_->commit("g", std::move(r), now_ms, [&](std::vector<std::error_code> e) { out = std::move(e); });
    return out.at(0);
  };
  EXPECT_EQ(commit("a", a.member_epoch + 1), errc::stale_member_epoch);
  EXPECT_EQ(commit("x", a.member_epoch), errc::unknown_member_id);
  EXPECT_EQ(commit("", -1), errc::unknown_member_id) << "an admin commit needs an empty group";
  EXPECT_FALSE(commit("a", a.member_epoch));
  EXPECT_EQ(coordinator_->fetch("g", std::nullopt, std::string("a"), 7).error(), errc::stale_member_epoch);
  const auto fetched = coordinator_->fetch("g", std::nullopt, std::string("a"), a.member_epoch);
  ASSERT_TRUE(fetched);
  ASSERT_EQ(fetched.value().size(), 1U);
  EXPECT_EQ(fetched.value()[0].second->committed, offset{5});
  EXPECT_TRUE(coordinator_->fetch("g", std::nullopt)) << "an admin may always read";
}

TEST_F(ConsumerGroupTest, ProtocolsDoNotMixInOneGroup) {
  (void)send(join("a"));
  join_request classic;
  classic.protocol_type = "consumer";
  classic.session_timeout_ms = 10000;
  classic.rebalance_timeout_ms = 10000;
  classic.protocols.push_back({"range", {}});
  classic.require_known_member_id = true;
  std::optional<join_result> joined;
  coordinator_->join("g", classic, now_ms, [&](join_result r) { joined = std::move(r); });
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->error, errc::inconsistent_group_protocol);
  const auto listed = coordinator_->list().groups;
  ASSERT_EQ(listed.size(), 1U);
  EXPECT_EQ(listed[0].type, group_type::consumer);
  EXPECT_EQ(state_name(listed[0].state), "Stable");

  // An empty consumer group may become classic, keeping its offsets.
  (void)send(beat("a", -1));
  joined.reset();
  coordinator_->join("g", classic, now_ms, [&](join_result r) { joined = std::move(r); });
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->error, errc::member_id_required);
  EXPECT_FALSE(coordinator_->describe_consumer_group("g"));
}

TEST_F(ConsumerGroupTest, MorePartitionsBumpTheEpochAndAreAssigned) {
  const auto a = send(join("a"));
  const auto grown = send(beat("a", a.member_epoch), now_ms, one_topic(8));
  EXPECT_EQ(grown.member_epoch, a.member_epoch + 1);
  EXPECT_EQ(of(grown.assignment).size(), 8U);
}

}  // namespace ferry::group

namespace ferry::group {
namespace {

// KIP-848 subscriptions by regular expression: the broker resolves them against the cluster's topics at every
// heartbeat, so a member gets the topics its whole-name pattern matches (never an internal one), and those
// created later.
TEST_F(ConsumerGroupTest, ARegularExpressionSubscribesToTheTopicsItMatchesThoseCreatedLaterToo) {
  std::map<std::string, topic_metadata> cluster{{"orders-a", {topic_uuid{1}, 3}},
                                                {"orders-b", {topic_uuid{2}, 2}},
                                                {"other", {topic_uuid{3}, 1}},
                                                {"xorders-a", {topic_uuid{4}, 1}},
                                                {"__consumer_offsets", {topic_uuid{5}, 50}}};
  const topic_lookup lookup = [&](const std::string& name) -> std::optional<topic_metadata> {
    const auto it = cluster.find(name);
    if (it == cluster.end()) return std::nullopt;
    return it->second;
  };
  const topic_names names = [&] {
    std::vector<std::string> out;
    for (const auto& [name, t] : cluster) out.push_back(name);
    return out;
  };
  const auto heartbeat = [&](const consumer_heartbeat_request& r) {
    std::optional<consumer_heartbeat_result> out;
    coordinator_->consumer_heartbeat(
        "g", r, lookup, now_ms, [&](consumer_heartbeat_result x) { out = std::move(x); }, names);
    EXPECT_TRUE(out.has_value());
    return out.value_or(consumer_heartbeat_result{});
  };
  const auto count = [](const std::optional<topic_id_partitions>& a) {
    std::size_t n = 0;
    if (a)
      for (const auto& [topic, ps] : *a) n += ps.size();
    return n;
  };
  auto r = join("a");
  r.subscribed_topic_names.reset();
  r.subscribed_topic_regex = "orders-.*|__.*";
  const auto joined = heartbeat(r);
  ASSERT_FALSE(joined.error) << joined.error_message;
  ASSERT_TRUE(joined.assignment);
  EXPECT_EQ(count(joined.assignment), 5u) << "orders-a and orders-b: not other, xorders-a or an internal topic";
  EXPECT_FALSE(joined.assignment->contains(topic_uuid{3}));
  const auto described = coordinator_->describe_consumer_group("g").value();
  EXPECT_EQ(described.members.at(0).subscribed_topic_regex, "orders-.*|__.*");

  cluster["orders-c"] = {topic_uuid{6}, 2};
  const auto later = heartbeat(beat("a", joined.member_epoch, joined.assignment));
  ASSERT_FALSE(later.error);
  EXPECT_GT(later.member_epoch, joined.member_epoch) << "a new matching topic bumps the group epoch";
  ASSERT_TRUE(later.assignment);
  EXPECT_EQ(count(later.assignment), 7u);
  EXPECT_TRUE(later.assignment->contains(topic_uuid{6}));
  EXPECT_TRUE(coordinator_->describe_consumer_group("g").value().members.at(0).subscribed_topic_regex);
}

}  // namespace
}  // namespace ferry::group
