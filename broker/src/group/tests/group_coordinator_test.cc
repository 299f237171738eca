#include "group/group_coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "base/guarded.h"
#include "group/errc.h"
#include "model/testing/memory_coordinator_log.h"

namespace ferry::group {
namespace {

constexpr std::int64_t now_ms = 1'700'000'000'000;

using memory_log = model::testing::memory_coordinator_log;

coordinator_config one_partition() {
  coordinator_config c;
  c.offsets_partitions = 1;
  c.limits.initial_rebalance_delay_ms = 0;
  return c;
}

// A coordinator leading the only partition, loaded.
std::unique_ptr<group_coordinator> loaded(memory_log& log, leader_epoch epoch = leader_epoch{1}) {
  auto c = std::make_unique<group_coordinator>(one_partition(), log);
  const auto to_load = c->lead({{0, epoch}});
  EXPECT_EQ(to_load, std::vector<std::int32_t>{0});
  EXPECT_TRUE(c->load(0, now_ms));
  return c;
}

}  // namespace

TEST(offsets_partition_for, IsJavasStringHashCodeModuloThePartitions) {
  EXPECT_EQ(offsets_partition_for("hello", 50), 99162322 % 50);
  // Java's hashCode of this string is Integer.MIN_VALUE; Kafka's Utils.abs makes that 0.
  EXPECT_EQ(offsets_partition_for("polygenelubricants", 50), 0);
  EXPECT_EQ(offsets_partition_for("\xc3\xa9", 50), 233 % 50);  // U+00E9: one UTF-16 unit
  // U+1F600: the surrogate pair D83D DE00.
  EXPECT_EQ(offsets_partition_for("\xf0\x9f\x98\x80", 1000), (0xd83d * 31 + 0xde00) % 1000);
}

namespace {

group_coordinator::commit_request simple_commit(std::vector<std::pair<topic_partition, std::int64_t>> offsets) {
  group_coordinator::commit_request r;
  for (const auto& [tp, o] : offsets)
    r.offsets.push_back({tp, committed_offset{offset{o}, leader_epoch{3}, "meta", now_ms, std::nullopt}});
  return r;
}

std::vector<std::error_code> run_commit(group_coordinator& c, const std::string& group,
                                        group_coordinator::commit_request r) {
  std::vector<std::error_code> out;
  c.commit(group, std::move(r), now_ms, [&](std::vector<std::error_code> e) { out = std::move(e); });
  return out;
}

// A new consumer's JoinGroup, with a session long enough for the test.
join_request consumer_join() {
  join_request r;
  r.client_id = "c";
  r.session_timeout_ms = 10000;
  r.rebalance_timeout_ms = 10000;
  r.protocol_type = "consumer";
  r.protocols.push_back({"range", {}});
  return r;
}

const topic_partition t0{"t", partition_id{0}};
const topic_partition t1{"t", partition_id{1}};

}  // namespace

TEST(group_coordinator, AnswersNotCoordinatorAndLoadingUntilItLeadsAndHasLoaded) {
  memory_log log;
  group_coordinator c(one_partition(), log);
  EXPECT_EQ(c.heartbeat("g", "m", std::nullopt, 1, now_ms), errc::not_coordinator);
  EXPECT_TRUE(c.lead({{0, leader_epoch{1}}}).size() == 1);
  EXPECT_EQ(c.heartbeat("g", "m", std::nullopt, 1, now_ms), errc::coordinator_loading);
  EXPECT_EQ(c.fetch("g", std::nullopt).error(), errc::coordinator_loading);
  ASSERT_TRUE(c.load(0, now_ms));
  EXPECT_EQ(c.heartbeat("g", "m", std::nullopt, 1, now_ms), errc::unknown_member_id);
  EXPECT_EQ(c.heartbeat("", "m", std::nullopt, 1, now_ms), errc::invalid_group_id);
}

TEST(group_coordinator, CommittedOffsetsAreReadBackByTheNextCoordinator) {
  memory_log log;
  {
    auto c = loaded(log);
    const auto errors = run_commit(*c, "g", simple_commit({{t0, 10}, {t1, 20}}));
    ASSERT_EQ(errors.size(), 2U);
    EXPECT_FALSE(errors[0]);
    EXPECT_FALSE(run_commit(*c, "g", simple_commit({{t0, 11}}))[0]);
  }
  auto next = loaded(log);
  const auto fetched = next->fetch("g", std::vector<topic_partition>{t0, t1, {"t", partition_id{2}}});
  ASSERT_TRUE(fetched);
  ASSERT_EQ(fetched.value().size(), 3U);
  EXPECT_EQ(fetched.value()[0].second->committed, offset{11});
  EXPECT_EQ(fetched.value()[0].second->epoch, leader_epoch{3});
  EXPECT_EQ(fetched.value()[0].second->metadata, "meta");
  EXPECT_EQ(fetched.value()[1].second->committed, offset{20});
  EXPECT_FALSE(fetched.value()[2].second) << "no commit: the handler answers -1";
}

TEST(group_coordinator, AFailedWriteCommitsNothing) {
  memory_log log;
  auto c = loaded(log);
  log.failure = errc::not_coordinator;
  EXPECT_EQ(run_commit(*c, "g", simple_commit({{t0, 10}}))[0], errc::not_coordinator);
  const auto fetched = c->fetch("g", std::nullopt);
  ASSERT_TRUE(fetched);
  EXPECT_TRUE(fetched.value().empty());
}

TEST(group_coordinator, TooLongMetadataIsRefusedPerPartition) {
  memory_log log;
  auto c = loaded(log);
  auto r = simple_commit({{t0, 1}, {t1, 2}});
  r.offsets[1].value.metadata.assign(4097, 'x');
  const auto errors = run_commit(*c, "g", std::move(r));
  EXPECT_FALSE(errors[0]);
  EXPECT_EQ(errors[1], errc::offset_metadata_too_large);
}

TEST(group_coordinator, AStableGroupIsReadBackWithItsMembersAndAssignments) {
  memory_log log;
  std::string member;
  {
    auto c = loaded(log);
    const auto r = consumer_join();
    std::optional<join_result> joined;
    c->join("g", r, now_ms, [&](join_result j) { joined = std::move(j); });
    c->tick(now_ms);
    ASSERT_TRUE(joined);
    ASSERT_FALSE(joined->error);
    member = joined->member_id;
    std::optional<sync_result> synced;
    c->sync("g", {member, std::nullopt, 1, std::nullopt, std::nullopt, {{member, {std::byte{7}}}}}, now_ms,
            [&](sync_result s) { synced = std::move(s); });
    ASSERT_TRUE(synced);
    EXPECT_FALSE(synced->error);
  }
  auto next = loaded(log, leader_epoch{2});
  const auto d = next->describe("g");
  ASSERT_TRUE(d);
  EXPECT_EQ(d.value().state, group_state::stable);
  EXPECT_EQ(d.value().protocol, "range");
  ASSERT_EQ(d.value().members.size(), 1U);
  EXPECT_EQ(d.value().members[0].member_id, member);
  EXPECT_EQ(d.value().members[0].assignment, std::vector<std::byte>{std::byte{7}});
  EXPECT_FALSE(next->heartbeat("g", member, std::nullopt, 1, now_ms)) << "its members carry on without rejoining";
}

TEST(group_coordinator, OverviewListsEveryLoadedGroupWithItsCommittedOffsets) {
  memory_log log;
  auto c = loaded(log);
  EXPECT_FALSE(run_commit(*c, "simple", simple_commit({{t0, 10}, {t1, 20}}))[0]);
  std::optional<join_result> joined;
  c->join("members", consumer_join(), now_ms, [&](join_result j) { joined = std::move(j); });
  c->tick(now_ms);
  ASSERT_TRUE(joined);

  auto groups = c->overview();
  ASSERT_EQ(groups.size(), 2U);
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.group_id < b.group_id; });
  EXPECT_EQ(groups[0].group_id, "members");
  EXPECT_EQ(groups[0].state, group_state::completing_rebalance);
  EXPECT_EQ(groups[0].members, 1U);
  EXPECT_EQ(groups[0].protocol_type, "consumer");
  EXPECT_TRUE(groups[0].protocol.empty()) << "not stable yet";
  EXPECT_TRUE(groups[0].committed.empty());
  EXPECT_EQ(groups[1].group_id, "simple");
  EXPECT_EQ(groups[1].state, group_state::empty);
  EXPECT_EQ(groups[1].members, 0U);
  const std::vector<std::pair<topic_partition, offset>> committed{{t0, offset{10}}, {t1, offset{20}}};
  EXPECT_EQ(groups[1].committed, committed);

  group_coordinator unloaded(one_partition(), log);
  (void)unloaded.lead({{0, leader_epoch{2}}});
  EXPECT_TRUE(unloaded.overview().empty()) << "a partition still loading shows nothing";
}

TEST(group_coordinator, DeletingAGroupLeavesNothingToReadBack) {
  memory_log log;
  {
    auto c = loaded(log);
    EXPECT_FALSE(run_commit(*c, "g", simple_commit({{t0, 10}}))[0]);
    std::error_code deleted = errc::coordinator_not_available;
    c->delete_group("g", [&](std::error_code e) { deleted = e; });
    EXPECT_FALSE(deleted);
    c->delete_group("g", [&](std::error_code e) { deleted = e; });
    EXPECT_EQ(deleted, errc::group_id_not_found);
  }
  auto next = loaded(log);
  EXPECT_TRUE(next->fetch("g", std::nullopt).value().empty());
  EXPECT_TRUE(next->list().groups.empty());
}

TEST(group_coordinator, ALoadCutShortByLosingLeadershipIsNotCoordinatorNotAFailure) {
  memory_log log;
  group_coordinator c(one_partition(), log);
  ASSERT_EQ(c.lead({{0, leader_epoch{1}}}).size(), 1U);
  log.replay_failure = std::make_error_code(std::errc::no_such_file_or_directory);  // the replica went away
  EXPECT_EQ(c.load(0, now_ms).error(), log.replay_failure) << "still led: a real failure";

  log.during_replay = [&] { (void)c.lead({}); };
  EXPECT_EQ(c.load(0, now_ms).error(), errc::not_coordinator);
}

TEST(group_coordinator, LosingLeadershipAnswersParkedJoinsWithNotCoordinator) {
  memory_log log;
  auto config = one_partition();
  config.limits.initial_rebalance_delay_ms = 3000;
  auto c = std::make_unique<group_coordinator>(config, log);
  (void)c->lead({{0, leader_epoch{1}}});
  ASSERT_TRUE(c->load(0, now_ms));
  const auto r = consumer_join();
  std::optional<join_result> parked;
  c->join("g", r, now_ms, [&](join_result j) { parked = std::move(j); });
  ASSERT_FALSE(parked) << "the first rebalance waits for the initial delay";
  EXPECT_TRUE(c->lead({}).empty());
  ASSERT_TRUE(parked);
  EXPECT_EQ(parked->error, errc::not_coordinator);
}

}  // namespace ferry::group

namespace ferry::group {
namespace {

group_coordinator::commit_request txn_commit(producer_id producer,
                                             std::vector<std::pair<topic_partition, std::int64_t>> offsets) {
  auto r = simple_commit(std::move(offsets));
  r.transaction = group_coordinator::txn_producer{producer, producer_epoch{0}};
  return r;
}

std::optional<offset> committed(group_coordinator& c, const topic_partition& tp) {
  const auto fetched = c.fetch("g", std::vector{tp});
  const auto& value = fetched.value().front().second;
  return value ? std::optional(value->committed) : std::nullopt;
}

}  // namespace

TEST(group_coordinator, TransactionalOffsetsCountOnlyOnceTheirTransactionCommits) {
  memory_log log;
  auto c = loaded(log);
  ASSERT_FALSE(run_commit(*c, "g", simple_commit({{t0, 5}}))[0]);
  ASSERT_FALSE(run_commit(*c, "g", txn_commit(producer_id{7}, {{t0, 10}, {t1, 20}}))[0]);
  EXPECT_EQ(committed(*c, t0), offset{5}) << "pending until the marker";
  EXPECT_EQ(c->pending_txn_offsets("g"), (std::vector{t0, t1}));
  c->complete_txn(0, producer_id{8}, true);
  EXPECT_EQ(committed(*c, t0), offset{5}) << "another producer's marker";
  c->complete_txn(0, producer_id{7}, true);
  EXPECT_EQ(committed(*c, t0), offset{10});
  EXPECT_EQ(committed(*c, t1), offset{20});
  EXPECT_TRUE(c->pending_txn_offsets("g").empty());

  ASSERT_FALSE(run_commit(*c, "g", txn_commit(producer_id{7}, {{t0, 30}}))[0]);
  c->complete_txn(0, producer_id{7}, false);
  EXPECT_EQ(committed(*c, t0), offset{10}) << "aborted";
  EXPECT_TRUE(c->pending_txn_offsets("g").empty());
}

TEST(group_coordinator, LoadingAppliesTransactionalOffsetsAtTheirCommitMarkers) {
  memory_log log;
  {
    auto c = loaded(log);
    ASSERT_FALSE(run_commit(*c, "g", txn_commit(producer_id{7}, {{t0, 10}}))[0]);
    log.add_marker(0, producer_id{7}, model::marker_type::commit);
    ASSERT_FALSE(run_commit(*c, "g", txn_commit(producer_id{7}, {{t0, 30}}))[0]);
    log.add_marker(0, producer_id{7}, model::marker_type::abort);
    ASSERT_FALSE(run_commit(*c, "g", txn_commit(producer_id{9}, {{t1, 40}}))[0]);  // still open
  }
  auto c = loaded(log, leader_epoch{2});
  EXPECT_EQ(committed(*c, t0), offset{10});
  EXPECT_EQ(committed(*c, t1), std::nullopt);
  EXPECT_EQ(c->pending_txn_offsets("g"), std::vector{t1});
  c->complete_txn(0, producer_id{9}, true);
  EXPECT_EQ(committed(*c, t1), offset{40});
}

}  // namespace ferry::group

namespace ferry::group {

// Issue 29: a group whose state machine throws (here a parked request's callback does, with the group part way
// through a change) is unloaded, its requests refused as loading, the failure counted, and the group comes back as
// its log has it; the broker, and the other groups, go on.
TEST(group_coordinator, AGroupWhoseStateMachineThrowsIsReadBackFromItsLog) {
  memory_log log;
  auto c = loaded(log);
  ASSERT_FALSE(run_commit(*c, "g", simple_commit({{t0, 10}}))[0]);
  ASSERT_FALSE(run_commit(*c, "other", simple_commit({{t0, 5}}))[0]);
  const auto failures = confined_failures();
  std::optional<join_result> answered;
  int answers = 0;
  c->join("g", consumer_join(), now_ms, [&](join_result r) {
    ++answers;
    answered = std::move(r);
    if (answers == 1) throw std::runtime_error("a bug while answering");
  });
  EXPECT_EQ(confined_failures(), failures + 1);
  EXPECT_EQ(answers, 1) << "the request is answered once";
  EXPECT_EQ(c->heartbeat("g", "m", std::nullopt, 1, now_ms), errc::coordinator_loading);
  EXPECT_EQ(c->fetch("g", std::nullopt).error(), errc::coordinator_loading);
  ASSERT_TRUE(c->fetch("other", std::nullopt)) << "the partition's other groups are served meanwhile";

  c->reload_failed(now_ms);
  const auto fetched = c->fetch("g", std::nullopt);
  ASSERT_TRUE(fetched);
  ASSERT_EQ(fetched.value().size(), 1U);
  EXPECT_EQ(fetched.value()[0].second->committed, offset{10});
  std::optional<join_result> joined;
  c->join("g", consumer_join(), now_ms, [&](join_result r) { joined = std::move(r); });
  c->tick(now_ms);
  ASSERT_TRUE(joined);
  EXPECT_FALSE(joined->error);
}

// A consumer group's heartbeat changes the group in memory before its records are written; when the write fails
// the log is the truth, and the group is read back from it.
TEST(group_coordinator, AConsumerGroupWhoseWriteFailedIsReadBackFromItsLog) {
  memory_log log;
  auto c = loaded(log);
  const topic_lookup topics = [](const std::string& name) -> std::optional<topic_metadata> {
    if (name != "t") return std::nullopt;
    return topic_metadata{topic_uuid{1}, 2};
  };
  const auto beat = [&](const std::string& member) {
    consumer_heartbeat_request r;
    r.member_id = member;
    r.member_epoch = 0;
    r.rebalance_timeout_ms = 30000;
    r.subscribed_topic_names = std::vector<std::string>{"t"};
    r.owned = topic_id_partitions{};
    std::optional<consumer_heartbeat_result> out;
    c->consumer_heartbeat("cg", r, topics, now_ms, [&](consumer_heartbeat_result x) { out = std::move(x); });
    return out;
  };
  const auto first = beat("a");
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->error);
  log.failure = errc::coordinator_not_available;
  const auto second = beat("b");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->error, errc::coordinator_not_available);
  log.failure = {};
  c->reload_failed(now_ms);
  const auto described = c->describe_consumer_group("cg");
  ASSERT_TRUE(described);
  ASSERT_EQ(described.value().members.size(), 1U) << "b never reached the log";
  EXPECT_EQ(described.value().members[0].member_id, "a");
}

}  // namespace ferry::group

namespace ferry::group {

// Review finding 14: two commits of one group and partition reach the log in one order, and their replication
// callbacks run in the other; memory must end as the log does (the later commit), as after a failover.
TEST(group_coordinator, CommitsApplyInLogOrderWhateverOrderTheirCompletionsRunIn) {
  memory_log log;
  auto c = loaded(log);
  log.hold_completions = true;
  std::vector<std::vector<std::error_code>> answers;
  const auto commit = [&](std::int64_t at) {
    c->commit("g", simple_commit({{t0, at}}), now_ms, [&](std::vector<std::error_code> e) { answers.push_back(e); });
  };
  commit(100);
  commit(101);
  ASSERT_EQ(log.held.size(), 2U);
  log.held[1]();
  log.held[0]();
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_FALSE(answers[0][0]);
  EXPECT_FALSE(answers[1][0]);
  const auto fetched = c->fetch("g", std::nullopt);
  ASSERT_TRUE(fetched);
  EXPECT_EQ(fetched.value()[0].second->committed, offset{101});
  log.hold_completions = false;
  EXPECT_EQ(loaded(log, leader_epoch{2})->fetch("g", std::nullopt).value()[0].second->committed, offset{101})
      << "the log says the same";
}

}  // namespace ferry::group
