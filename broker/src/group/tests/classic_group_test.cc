#include "group/classic_group.h"

#include <gtest/gtest.h>

#include <optional>

#include "group/consumer_protocol.h"
#include "group/errc.h"
#include "group/tests/hand_bytes.h"

namespace ferry::group {
namespace {

constexpr std::int64_t start_ms = 1'000'000;

using testing::to_bytes;

// A consumer's subscription to topic "t", told apart per protocol by its user data.
std::vector<std::byte> subscription_for(const std::string& protocol) {
  return encode_subscription({.version = 0, .topics = {"t"}, .user_data = to_bytes(protocol)});
}

join_request joiner(std::string member_id = "", std::vector<std::string> protocols = {"range"}) {
  join_request r;
  r.member_id = std::move(member_id);
  r.client_id = "client";
  r.client_host = "/127.0.0.1";
  r.session_timeout_ms = 10000;
  r.rebalance_timeout_ms = 30000;
  r.protocol_type = "consumer";
  for (const auto& p : protocols) r.protocols.push_back({p, subscription_for(p)});
  r.require_known_member_id = true;
  return r;
}

// A group and a clock, with the answers parked requests got.
class classic_group_test : public ::testing::Test {
 protected:
  classic_group_test() : group_("g", limits(), start_ms) {}

  static group_limits limits() {
    group_limits l;
    l.initial_rebalance_delay_ms = 3000;
    return l;
  }

  // Joins and returns the slot its answer lands in.
  std::shared_ptr<std::optional<join_result>> join(const join_request& r) {
    auto slot = std::make_shared<std::optional<join_result>>();
    group_.join(r, now_, [slot](join_result result) { *slot = std::move(result); });
    return slot;
  }
  std::shared_ptr<std::optional<sync_result>> sync(const std::string& member, std::int32_t generation,
                                                   std::vector<std::pair<std::string, std::vector<std::byte>>> a = {}) {
    auto slot = std::make_shared<std::optional<sync_result>>();
    group_.sync({member, std::nullopt, generation, std::nullopt, std::nullopt, std::move(a)}, now_,
                [slot](sync_result result) { *slot = std::move(result); });
    return slot;
  }
  void advance(std::int64_t ms) {
    now_ += ms;
    group_.tick(now_);
  }
  // Members that joined during the first delay extend it once (group.initial.rebalance.delay.ms).
  void through_initial_delay() {
    advance(3000);
    advance(3000);
  }
  // Completes every store the group asked for.
  void store_all(std::error_code outcome = {}) {
    for (const auto& s : group_.take_stores()) group_.stored(s.generation, outcome, now_);
  }
  // A member id handed out with MEMBER_ID_REQUIRED, then a join with it.
  std::shared_ptr<std::optional<join_result>> join_two_step(const join_request& r) {
    const auto first = join(r);
    EXPECT_TRUE(first->has_value());
    EXPECT_EQ((*first)->error, errc::member_id_required);
    auto again = r;
    again.member_id = (*first)->member_id;
    return join(again);
  }
  // Three members joined, synced and stable at generation 1; their ids in join order.
  std::vector<std::string> stable_group_of_three() {
    std::vector<std::shared_ptr<std::optional<join_result>>> joins;
    for (int i = 0; i < 3; ++i) joins.push_back(join_two_step(joiner()));
    through_initial_delay();
    std::vector<std::string> ids;
    for (const auto& j : joins) {
      EXPECT_TRUE(j->has_value());
      ids.push_back((*j)->member_id);
    }
    const auto leader = (*joins[0])->leader;
    std::vector<std::shared_ptr<std::optional<sync_result>>> syncs;
    for (const auto& id : ids) {
      std::vector<std::pair<std::string, std::vector<std::byte>>> assignment;
      if (id == leader)
        for (const auto& other : ids) assignment.emplace_back(other, to_bytes("for-" + other));
      syncs.push_back(sync(id, 1, assignment));
    }
    store_all();
    EXPECT_EQ(group_.state(), group_state::stable);
    return ids;
  }

  std::int64_t now_ = start_ms;
  classic_group group_;
};

TEST_F(classic_group_test, ANewMemberIsToldItsIdFirstAndJoinsWithIt) {
  const auto first = join(joiner());
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->error, errc::member_id_required);
  EXPECT_EQ((*first)->member_id.rfind("client-", 0), 0U);
  EXPECT_EQ(group_.member_count(), 0U);

  auto again = joiner((*first)->member_id);
  const auto second = join(again);
  EXPECT_FALSE(second->has_value()) << "the first rebalance waits group.initial.rebalance.delay.ms";
  EXPECT_EQ(group_.state(), group_state::preparing_rebalance);
  advance(2999);
  EXPECT_FALSE(second->has_value());
  advance(1);
  ASSERT_TRUE(second->has_value());
  EXPECT_FALSE((*second)->error);
  EXPECT_EQ((*second)->generation, 1);
  EXPECT_EQ((*second)->leader, (*first)->member_id);
  EXPECT_EQ((*second)->protocol_name, "range");
  ASSERT_EQ((*second)->members.size(), 1U);
  EXPECT_EQ((*second)->members[0].metadata, subscription_for("range"));
  EXPECT_EQ(group_.state(), group_state::completing_rebalance);
}

TEST(classic_group, WithoutAnInitialDelayTheFirstRebalanceCompletesAtOnce) {
  group_limits no_delay;
  no_delay.initial_rebalance_delay_ms = 0;
  classic_group g("g", no_delay, start_ms);
  std::optional<join_result> first;
  g.join(joiner(), start_ms, [&](join_result r) { first = std::move(r); });
  ASSERT_TRUE(first.has_value());
  std::optional<join_result> joined;
  g.join(joiner(first->member_id), start_ms, [&](join_result r) { joined = std::move(r); });
  ASSERT_TRUE(joined.has_value()) << "answered in the join itself, not at the coordinator's next tick";
  EXPECT_EQ(joined->generation, 1);
  EXPECT_EQ(g.state(), group_state::completing_rebalance);
}

TEST_F(classic_group_test, MembersArrivingDuringTheInitialDelayExtendIt) {
  const auto a = join_two_step(joiner());
  advance(2000);
  const auto b = join_two_step(joiner());
  advance(1000);  // the first delay ends with a new member in it: another delay
  EXPECT_FALSE(a->has_value());
  advance(3000);
  ASSERT_TRUE(a->has_value());
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*a)->generation, 1);
  EXPECT_EQ((*a)->members.size() + (*b)->members.size(), 2U) << "only the leader's answer lists the members";
}

TEST_F(classic_group_test, TheLeadersAssignmentReachesEveryMemberOnceStored) {
  std::vector<std::shared_ptr<std::optional<join_result>>> joins;
  for (int i = 0; i < 3; ++i) joins.push_back(join_two_step(joiner()));
  through_initial_delay();
  const auto leader = (*joins[0])->leader;
  std::vector<std::string> ids;
  for (const auto& j : joins) ids.push_back((*j)->member_id);
  const auto follower = ids[0] == leader ? ids[1] : ids[0];

  const auto follower_sync = sync(follower, 1);
  EXPECT_FALSE(follower_sync->has_value()) << "followers wait for the leader's assignment";
  std::vector<std::pair<std::string, std::vector<std::byte>>> assignment;
  for (const auto& id : ids) assignment.emplace_back(id, to_bytes("for-" + id));
  const auto leader_sync = sync(leader, 1, assignment);
  EXPECT_FALSE(leader_sync->has_value()) << "nobody gets an assignment before it is stored";
  const auto stores = group_.take_stores();
  ASSERT_EQ(stores.size(), 1U);
  EXPECT_EQ(stores[0].value.generation, 1);
  EXPECT_EQ(stores[0].value.members.size(), 3U);
  group_.stored(stores[0].generation, {}, now_);
  ASSERT_TRUE(follower_sync->has_value());
  ASSERT_TRUE(leader_sync->has_value());
  EXPECT_EQ((*follower_sync)->assignment, to_bytes("for-" + follower));
  EXPECT_EQ((*leader_sync)->assignment, to_bytes("for-" + leader));
  EXPECT_EQ(group_.state(), group_state::stable);
  // A late SyncGroup from the third member gets its assignment at once.
  const auto third = ids[2] == leader ? ids[1] : ids[2];
  const auto late = sync(third, 1);
  ASSERT_TRUE(late->has_value());
  EXPECT_EQ((*late)->assignment, to_bytes("for-" + third));
}

TEST_F(classic_group_test, AFailedStoreRebalancesInsteadOfHandingOutAssignments) {
  const auto a = join_two_step(joiner());
  advance(3000);
  const auto leader_sync = sync((*a)->member_id, 1, {{(*a)->member_id, to_bytes("x")}});
  store_all(errc::not_coordinator);
  ASSERT_TRUE(leader_sync->has_value());
  EXPECT_EQ((*leader_sync)->error, errc::not_coordinator);
  EXPECT_EQ(group_.state(), group_state::preparing_rebalance);
}

TEST_F(classic_group_test, AnExpiredSessionRebalancesAndTheOthersRejoin) {
  const auto ids = stable_group_of_three();
  // Two keep heartbeating; the third goes silent.
  for (int i = 0; i < 2; ++i) {
    advance(4000);
    EXPECT_FALSE(group_.heartbeat(ids[0], std::nullopt, 1, now_));
    EXPECT_FALSE(group_.heartbeat(ids[1], std::nullopt, 1, now_));
  }
  advance(4000);
  EXPECT_EQ(group_.state(), group_state::preparing_rebalance);
  EXPECT_FALSE(group_.has_member(ids[2]));
  EXPECT_EQ(group_.heartbeat(ids[0], std::nullopt, 1, now_), errc::rebalance_in_progress);
  EXPECT_EQ(group_.heartbeat(ids[2], std::nullopt, 1, now_), errc::unknown_member_id);
  const auto a = join(joiner(ids[0]));
  EXPECT_FALSE(a->has_value());
  const auto b = join(joiner(ids[1]));
  ASSERT_TRUE(a->has_value()) << "everyone rejoined: the join phase ends without waiting for the timeout";
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*a)->generation, 2);
  EXPECT_EQ(group_.heartbeat(ids[0], std::nullopt, 1, now_), errc::illegal_generation);
}

TEST_F(classic_group_test, MembersThatDoNotRejoinAreDroppedAtTheRebalanceTimeout) {
  const auto ids = stable_group_of_three();
  EXPECT_FALSE(group_.leave(ids[2], std::nullopt, now_));
  EXPECT_EQ(group_.state(), group_state::preparing_rebalance);
  const auto a = join(joiner(ids[0]));
  // ids[1] keeps its session alive but never rejoins.
  for (int i = 0; i < 5; ++i) {
    advance(5000);
    EXPECT_EQ(group_.heartbeat(ids[1], std::nullopt, 1, now_), errc::rebalance_in_progress);
  }
  advance(4999);
  EXPECT_FALSE(a->has_value());
  EXPECT_EQ(group_.heartbeat(ids[1], std::nullopt, 1, now_), errc::rebalance_in_progress);
  advance(1);
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->generation, 2);
  EXPECT_EQ(group_.member_count(), 1U);
  EXPECT_EQ((*a)->leader, ids[0]);
}

TEST_F(classic_group_test, AStableFollowerRejoiningWithTheSameMetadataChangesNothing) {
  const auto ids = stable_group_of_three();
  const auto leader = group_.leader();
  const auto follower = ids[0] == leader ? ids[1] : ids[0];
  const auto again = join(joiner(follower));
  ASSERT_TRUE(again->has_value());
  EXPECT_EQ((*again)->generation, 1);
  EXPECT_EQ(group_.state(), group_state::stable);
  // New metadata (a new subscription) rebalances.
  const auto changed = join(joiner(follower, {"range", "roundrobin"}));
  EXPECT_EQ(group_.state(), group_state::preparing_rebalance);
}

TEST_F(classic_group_test, TheProtocolIsOneEveryMemberSupports) {
  auto a = joiner("", {"cooperative-sticky", "range"});
  auto b = joiner("", {"range", "cooperative-sticky"});
  auto c = joiner("", {"range"});
  const auto ja = join_two_step(a);
  const auto jb = join_two_step(b);
  const auto jc = join_two_step(c);
  through_initial_delay();
  ASSERT_TRUE(ja->has_value());
  EXPECT_EQ((*ja)->protocol_name, "range");
  const auto refused = join(joiner("", {"roundrobin"}));
  ASSERT_TRUE(refused->has_value());
  EXPECT_EQ((*refused)->error, errc::inconsistent_group_protocol);
}

TEST_F(classic_group_test, SessionTimeoutsOutsideTheLimitsAreRefused) {
  auto r = joiner();
  r.session_timeout_ms = 5999;
  const auto refused = join(r);
  ASSERT_TRUE(refused->has_value());
  EXPECT_EQ((*refused)->error, errc::invalid_session_timeout);
}

TEST_F(classic_group_test, ARestartedStaticMemberGetsItsAssignmentBackWithoutARebalance) {
  auto r = joiner();
  r.group_instance_id = "instance-1";
  r.require_known_member_id = false;  // static members join at once (KIP-345)
  const auto first = join(r);
  advance(3000);
  ASSERT_TRUE(first->has_value());
  const auto old_id = (*first)->member_id;
  EXPECT_EQ(old_id.rfind("instance-1-", 0), 0U);
  sync(old_id, 1, {{old_id, to_bytes("mine")}});
  store_all();
  ASSERT_EQ(group_.state(), group_state::stable);

  // The process restarts: same instance id, no member id, and a subscription that no longer names what it owned.
  r.protocols[0].metadata = to_bytes("owns nothing yet");
  const auto rejoined = join(r);
  EXPECT_FALSE(rejoined->has_value()) << "the new member id is stored first";
  store_all();
  ASSERT_TRUE(rejoined->has_value());
  EXPECT_FALSE((*rejoined)->error);
  EXPECT_EQ((*rejoined)->generation, 1);
  EXPECT_NE((*rejoined)->member_id, old_id);
  EXPECT_EQ(group_.state(), group_state::stable);
  const auto assignment = sync((*rejoined)->member_id, 1);
  ASSERT_TRUE(assignment->has_value());
  EXPECT_EQ((*assignment)->assignment, to_bytes("mine"));
  // The old incarnation is fenced.
  EXPECT_EQ(group_.heartbeat(old_id, std::string("instance-1"), 1, now_), errc::fenced_instance_id);
  EXPECT_EQ(group_.leave(old_id, std::string("instance-1"), now_), errc::fenced_instance_id);
}

TEST_F(classic_group_test, StaticMembersSurviveARebalanceTheyMissUntilTheirSessionEnds) {
  auto r = joiner();
  r.group_instance_id = "instance-1";
  r.require_known_member_id = false;
  r.session_timeout_ms = 60000;
  const auto stat = join(r);
  const auto dyn = join_two_step(joiner());
  through_initial_delay();
  sync((*stat)->member_id, 1, {});
  sync((*dyn)->member_id, 1, {});
  store_all();
  ASSERT_EQ(group_.state(), group_state::stable);
  EXPECT_FALSE(group_.leave((*dyn)->member_id, std::nullopt, now_));
  advance(30000);
  EXPECT_TRUE(group_.has_member((*stat)->member_id)) << "static members are not dropped by the join timeout";
  advance(30000);
  EXPECT_FALSE(group_.has_member((*stat)->member_id)) << "but by their session timeout";
}

// The crash franz-go's static members found (issue 29): the static leader leaves by instance id; the id
// remove_member compared the leader with lived in the static-member table it had just erased, so the leader
// stayed a member that no longer existed, and the next rebalance threw from members_.at(leader_).
TEST_F(classic_group_test, AStaticLeaderLeavingByInstanceIdHandsLeadershipToAnotherMember) {
  std::vector<std::string> ids;
  std::vector<std::shared_ptr<std::optional<join_result>>> joins;
  for (int i = 0; i < 2; ++i) {
    auto r = joiner();
    r.group_instance_id = "instance-" + std::to_string(i);
    r.require_known_member_id = false;
    joins.push_back(join(r));
  }
  through_initial_delay();
  for (const auto& j : joins) {
    ASSERT_TRUE(j->has_value());
    ids.push_back((*j)->member_id);
  }
  const auto leader = (*joins[0])->leader;
  const auto follower = leader == ids[0] ? ids[1] : ids[0];
  const std::string leader_instance = leader == ids[0] ? "instance-0" : "instance-1";
  ASSERT_FALSE(group_.leave("", leader_instance, now_));
  EXPECT_EQ(group_.leader(), follower);
  EXPECT_EQ(group_.broken_invariant(), "");
  // The rebalance the leave started completes with the member that is left.
  auto rejoin = joiner(follower);
  rejoin.group_instance_id = leader == ids[0] ? "instance-1" : "instance-0";
  const auto answer = join(rejoin);
  advance(100);
  ASSERT_TRUE(answer->has_value());
  EXPECT_FALSE((*answer)->error);
  EXPECT_EQ((*answer)->leader, follower);
  EXPECT_EQ(group_.state(), group_state::completing_rebalance);
}

TEST_F(classic_group_test, CommitsFollowMembershipAndGeneration) {
  EXPECT_FALSE(group_.validate_commit("", std::nullopt, -1, now_)) << "an empty group takes commits from outside";
  const auto ids = stable_group_of_three();
  EXPECT_FALSE(group_.validate_commit(ids[0], std::nullopt, 1, now_));
  EXPECT_EQ(group_.validate_commit(ids[0], std::nullopt, 0, now_), errc::illegal_generation);
  EXPECT_EQ(group_.validate_commit("stranger", std::nullopt, 1, now_), errc::unknown_member_id);
  EXPECT_EQ(group_.validate_commit("", std::nullopt, -1, now_), errc::unknown_member_id);
  EXPECT_FALSE(group_.leave(ids[2], std::nullopt, now_));
  EXPECT_FALSE(group_.validate_commit(ids[0], std::nullopt, 1, now_)) << "allowed while preparing a rebalance";
  join(joiner(ids[0]));
  join(joiner(ids[1]));
  EXPECT_EQ(group_.state(), group_state::completing_rebalance);
  EXPECT_EQ(group_.validate_commit(ids[0], std::nullopt, 2, now_), errc::rebalance_in_progress);
}

TEST_F(classic_group_test, AnEmptyGroupsOffsetsExpireAfterTheRetentionFromWhenItEmptied) {
  const auto ids = stable_group_of_three();
  const topic_partition tp{"t", partition_id{0}};
  group_.apply_commit(tp, {offset{5}, leader_epoch{-1}, "", now_, std::nullopt});
  EXPECT_TRUE(group_.expired_offsets(now_ + 100000, 1000).empty())
      << "a stable group keeps the offsets of the topics it subscribes to";
  const topic_partition other{"other", partition_id{0}};
  group_.apply_commit(other, {offset{1}, leader_epoch{-1}, "", now_, std::nullopt});
  EXPECT_EQ(group_.expired_offsets(now_ + 1000, 1000), std::vector<topic_partition>{other});
  group_.remove_offset(other);
  for (const auto& id : ids) EXPECT_FALSE(group_.leave(id, std::nullopt, now_));
  advance(0);
  EXPECT_EQ(group_.state(), group_state::empty);
  EXPECT_TRUE(group_.expired_offsets(now_ + 999, 1000).empty());
  EXPECT_EQ(group_.expired_offsets(now_ + 1000, 1000), std::vector<topic_partition>{tp});
}

}  // namespace
}  // namespace ferry::group
