#include "txn/txn_coordinator.h"

#include <gtest/gtest.h>

#include <deque>

#include "model/testing/memory_coordinator_log.h"
#include "txn/errc.h"

namespace ferry::txn {
namespace {

using model::marker_type;

class counting_ids final : public producer_id_source {
 public:
  result<producer_id> next() override { return producer_id{next_++}; }
  std::int64_t next_ = 1000;
};

// Markers are answered by the test: each request waits in `sent` until answer() says which partitions failed.
class held_markers final : public marker_writer {
 public:
  void write(marker_request request, std::function<void(std::vector<topic_partition>)> done) override {
    sent.push_back({std::move(request), std::move(done)});
  }
  void answer(std::vector<topic_partition> retry = {}) {
    ASSERT_FALSE(sent.empty());
    auto next = std::move(sent.front());
    sent.pop_front();
    next.second(std::move(retry));
  }
  std::deque<std::pair<marker_request, std::function<void(std::vector<topic_partition>)>>> sent;
};

constexpr std::int64_t t0 = 1'700'000'000'000;
const topic_partition orders0{"orders", partition_id{0}};
const topic_partition orders1{"orders", partition_id{1}};

class TxnCoordinator : public ::testing::Test {
 protected:
  void SetUp() override { lead_all(leader_epoch{3}); }

  void lead_all(leader_epoch epoch) {
    std::map<std::int32_t, leader_epoch> led;
    for (std::int32_t p = 0; p < config_.log_partitions; ++p) led.emplace(p, epoch);
    for (const auto p : coordinator_.lead(led)) ASSERT_TRUE(coordinator_.load(p, t0));
  }

  result<producer_identity> init(const std::string& id, std::optional<producer_identity> expected = std::nullopt,
                                 std::int32_t timeout_ms = 60000) {
    std::optional<result<producer_identity>> out;
    coordinator_.init_producer_id(id, timeout_ms, expected, now_, [&](result<producer_identity> r) { out = r; });
    EXPECT_TRUE(out.has_value());
    return out.value_or(errc::not_coordinator);
  }
  std::error_code add(const std::string& id, producer_identity p, std::vector<topic_partition> partitions,
                      bool by_broker = false) {
    std::optional<std::error_code> out;
    coordinator_.add_partitions(id, p, partitions, by_broker, now_, [&](std::error_code ec) { out = ec; });
    EXPECT_TRUE(out.has_value());
    return out.value_or(errc::not_coordinator);
  }
  // EndTxn before v5: the producer keeps its id and epoch.
  std::error_code end(const std::string& id, producer_identity p, bool commit) {
    const auto out = end_bumping(id, p, commit, false);
    if (!out) return out.error();
    EXPECT_EQ(out.value(), p);
    return {};
  }
  result<producer_identity> end_bumping(const std::string& id, producer_identity p, bool commit, bool bump = true) {
    std::optional<result<producer_identity>> out;
    coordinator_.end_txn(id, p, commit, bump, now_, [&](result<producer_identity> r) { out = r; });
    EXPECT_TRUE(out.has_value());
    return out.value_or(errc::not_coordinator);
  }
  txn_state state_of(const std::string& id) { return coordinator_.describe(id).value().state; }

  coordinator_config config_{.log_partitions = 4};
  model::testing::memory_coordinator_log log_;
  counting_ids ids_;
  held_markers markers_;
  txn_coordinator coordinator_{config_, log_, ids_, markers_};
  std::int64_t now_ = t0;
};

TEST_F(TxnCoordinator, InitGivesANewProducerIdThenBumpsItsEpoch) {
  const auto first = init("app-1").value();
  EXPECT_EQ(first, (producer_identity{producer_id{1000}, producer_epoch{0}}));
  EXPECT_EQ(init("app-1").value(), (producer_identity{producer_id{1000}, producer_epoch{1}}));
  EXPECT_EQ(init("app-2").value().id, producer_id{1001});
  EXPECT_EQ(state_of("app-1"), txn_state::empty);
}

TEST_F(TxnCoordinator, RefusesTimeoutsAboveTheMaximum) {
  EXPECT_EQ(init("app", std::nullopt, config_.max_timeout_ms + 1).error(), errc::invalid_transaction_timeout);
  EXPECT_EQ(init("app", std::nullopt, 0).error(), errc::invalid_transaction_timeout);
}

TEST_F(TxnCoordinator, CommitWritesPrepareThenMarkersThenComplete) {
  const auto p = init("app").value();
  ASSERT_FALSE(add("app", p, {orders0, orders1}));
  EXPECT_EQ(state_of("app"), txn_state::ongoing);
  ASSERT_FALSE(end("app", p, true));
  EXPECT_EQ(state_of("app"), txn_state::prepare_commit);
  ASSERT_EQ(markers_.sent.size(), 1u);
  const auto& request = markers_.sent.front().first;
  EXPECT_EQ(request.type, marker_type::commit);
  EXPECT_EQ(request.producer, p);
  EXPECT_EQ(request.coordinator_epoch, 3);
  EXPECT_EQ(request.partitions, (std::vector{orders0, orders1}));
  // A new transaction waits for the markers of the last one.
  EXPECT_EQ(add("app", p, {orders0}), errc::concurrent_transactions);
  EXPECT_EQ(end("app", p, true), errc::concurrent_transactions);
  EXPECT_EQ(end("app", p, false), errc::invalid_txn_state);
  markers_.answer();
  EXPECT_EQ(state_of("app"), txn_state::complete_commit);
  EXPECT_TRUE(coordinator_.describe("app").value().partitions.empty());
  EXPECT_FALSE(end("app", p, true)) << "a retried commit succeeds";
  EXPECT_EQ(end("app", p, false), errc::invalid_txn_state);
  // Empty, Ongoing, PrepareCommit, CompleteCommit: every step reached the log.
  std::vector<txn_state> written;
  for (const auto& r : log_.records(coordinator_.partition_for("app")))
    written.push_back(decode_txn_value(*r.value).value().state);
  EXPECT_EQ(written,
            (std::vector{txn_state::empty, txn_state::ongoing, txn_state::prepare_commit, txn_state::complete_commit}));
}

TEST_F(TxnCoordinator, MarkersAreSentAgainOnlyWhereTheyFailed) {
  const auto p = init("app").value();
  ASSERT_FALSE(add("app", p, {orders0, orders1}));
  ASSERT_FALSE(end("app", p, false));
  markers_.answer({orders1});
  EXPECT_EQ(state_of("app"), txn_state::prepare_abort);
  EXPECT_TRUE(markers_.sent.empty());
  coordinator_.tick(now_);
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.partitions, std::vector{orders1});
  EXPECT_EQ(markers_.sent.front().first.type, marker_type::abort);
  markers_.answer();
  EXPECT_EQ(state_of("app"), txn_state::complete_abort);
}

TEST_F(TxnCoordinator, OldEpochsAndOtherProducerIdsAreRefused) {
  const auto old = init("app").value();
  const auto current = init("app").value();
  EXPECT_EQ(add("app", old, {orders0}), errc::producer_fenced);
  EXPECT_EQ(add("app", {producer_id{77}, current.epoch}, {orders0}), errc::invalid_producer_id_mapping);
  EXPECT_EQ(add("nobody", current, {orders0}), errc::invalid_producer_id_mapping);
  EXPECT_EQ(end("app", old, true), errc::producer_fenced);
  EXPECT_EQ(end("app", current, true), errc::invalid_txn_state) << "nothing to commit";
}

TEST_F(TxnCoordinator, ANewProducerAbortsTheOpenTransactionUnderABumpedEpoch) {
  const auto zombie = init("app").value();
  ASSERT_FALSE(add("app", zombie, {orders0}));
  EXPECT_EQ(init("app").error(), errc::concurrent_transactions);
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.type, marker_type::abort);
  EXPECT_EQ(markers_.sent.front().first.producer.epoch, producer_epoch{1});
  EXPECT_EQ(init("app").error(), errc::concurrent_transactions) << "until the abort completes";
  markers_.answer();
  EXPECT_EQ(init("app").value(), (producer_identity{zombie.id, producer_epoch{2}}));
  EXPECT_EQ(end("app", zombie, true), errc::producer_fenced);
}

TEST_F(TxnCoordinator, AnEpochBumpIsRetriedWithTheSameAnswer) {
  const auto p = init("app").value();
  const auto bumped = init("app", p).value();
  EXPECT_EQ(bumped, (producer_identity{p.id, producer_epoch{1}}));
  EXPECT_EQ(init("app", p).value(), bumped) << "the response was lost and the producer asks again";
  EXPECT_EQ(init("app", producer_identity{producer_id{5}, producer_epoch{0}}).error(), errc::producer_fenced);
  EXPECT_EQ(init("app", bumped).value(), (producer_identity{p.id, producer_epoch{2}}));
  EXPECT_EQ(init("app", p).error(), errc::producer_fenced) << "two bumps back";
}

TEST_F(TxnCoordinator, AnExhaustedEpochRotatesTheProducerId) {
  auto p = init("app").value();
  // Walk the epoch to the last bumpable one through the log: a partition Kafka wrote could hold it.
  log_.items.clear();
  txn_log_value high{.pid = p.id, .epoch = producer_epoch{32766}, .timeout_ms = 60000, .last_update_ms = t0};
  log_.append(coordinator_.partition_for("app"), {{encode_txn_key("app"), encode_txn_value(high)}}, [](auto) {});
  lead_all(leader_epoch{4});
  const auto rotated = init("app", producer_identity{p.id, producer_epoch{32766}}).value();
  EXPECT_NE(rotated.id, p.id);
  EXPECT_EQ(rotated.epoch, producer_epoch{0});
  EXPECT_EQ(init("app", producer_identity{p.id, producer_epoch{32766}}).value(), rotated) << "a retry";
}

TEST_F(TxnCoordinator, TimedOutTransactionsAreAbortedAndTheirProducerFenced) {
  const auto p = init("app", std::nullopt, 1000).value();
  ASSERT_FALSE(add("app", p, {orders0}));
  coordinator_.tick(now_ + 999);
  EXPECT_TRUE(markers_.sent.empty());
  now_ += config_.abort_timed_out_interval_ms + 2000;
  coordinator_.tick(now_);
  EXPECT_EQ(state_of("app"), txn_state::prepare_abort);
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.producer.epoch, producer_epoch{1});
  markers_.answer();
  EXPECT_EQ(state_of("app"), txn_state::complete_abort);
  EXPECT_EQ(add("app", p, {orders0}), errc::producer_fenced);
}

TEST_F(TxnCoordinator, IdleTransactionalIdsExpire) {
  ASSERT_TRUE(init("app"));
  now_ += config_.id_expiration_ms;
  coordinator_.tick(now_);
  EXPECT_EQ(coordinator_.describe("app").error(), errc::transactional_id_not_found);
  EXPECT_FALSE(log_.records(coordinator_.partition_for("app")).back().value) << "a tombstone";
  lead_all(leader_epoch{4});
  EXPECT_EQ(coordinator_.describe("app").error(), errc::transactional_id_not_found);
}

TEST_F(TxnCoordinator, ANewCoordinatorCompletesWhatTheOldOnePrepared) {
  const auto p = init("app").value();
  ASSERT_FALSE(add("app", p, {orders0, orders1}));
  ASSERT_FALSE(end("app", p, true));
  markers_.sent.clear();  // the old coordinator dies with its markers unanswered
  lead_all(leader_epoch{4});
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.coordinator_epoch, 4);
  EXPECT_EQ(markers_.sent.front().first.partitions, (std::vector{orders0, orders1}));
  markers_.answer();
  EXPECT_EQ(state_of("app"), txn_state::complete_commit);
  EXPECT_EQ(init("app").value().epoch, producer_epoch{1}) << "the id and epoch came back from the log";
}

TEST_F(TxnCoordinator, RequestsWaitForLoadingAndGoElsewhereWhenNotLed) {
  EXPECT_TRUE(coordinator_.lead({}).empty());
  EXPECT_EQ(init("app").error(), errc::not_coordinator);
  const auto p = coordinator_.partition_for("app");
  ASSERT_EQ(coordinator_.lead({{p, leader_epoch{5}}}), std::vector{p});
  EXPECT_EQ(init("app").error(), errc::coordinator_loading);
  EXPECT_TRUE(coordinator_.list().loading);
  ASSERT_TRUE(coordinator_.load(p, t0));
  EXPECT_TRUE(init("app"));
  const auto listed = coordinator_.list();
  ASSERT_EQ(listed.transactions.size(), 1u);
  EXPECT_EQ(listed.transactions[0].transactional_id, "app");
}

TEST_F(TxnCoordinator, VerifiesThatAPartitionIsInTheOpenTransaction) {
  const auto p = init("app").value();
  EXPECT_EQ(coordinator_.verify_partition("app", p, orders0), errc::invalid_txn_state);
  ASSERT_FALSE(add("app", p, {orders0}));
  EXPECT_FALSE(coordinator_.verify_partition("app", p, orders0));
  EXPECT_EQ(coordinator_.verify_partition("app", p, orders1), errc::invalid_txn_state);
  EXPECT_EQ(coordinator_.verify_partition("app", {p.id, producer_epoch{9}}, orders0), errc::producer_fenced);
}

TEST_F(TxnCoordinator, EveryEndBumpsTheEpochWhenTheProducerAsks) {
  const auto p = init("app").value();
  ASSERT_FALSE(add("app", p, {orders0}));
  const auto next = end_bumping("app", p, true).value();
  EXPECT_EQ(next, (producer_identity{p.id, producer_epoch{1}}));
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.producer, next) << "the markers fence the transaction's own batches";
  EXPECT_EQ(end_bumping("app", p, true).error(), errc::concurrent_transactions) << "a retry while markers go out";
  EXPECT_EQ(end_bumping("app", next, true).error(), errc::producer_fenced);
  markers_.answer();
  EXPECT_EQ(state_of("app"), txn_state::complete_commit);
  EXPECT_EQ(end_bumping("app", p, true).value(), next) << "a retry after the commit completed";
  EXPECT_EQ(end_bumping("app", p, false).error(), errc::invalid_txn_state);
  EXPECT_EQ(end_bumping("app", next, true).error(), errc::invalid_txn_state) << "nothing open to commit";
  EXPECT_EQ(add("app", p, {orders0}), errc::producer_fenced);
  ASSERT_FALSE(add("app", next, {orders1}));
  const auto record = decode_txn_value(*log_.records(coordinator_.partition_for("app")).back().value).value();
  EXPECT_EQ(record.client_txn_version, 2);
}

TEST_F(TxnCoordinator, AnAbortWithNothingOpenStillBumpsTheEpoch) {
  const auto p = init("app").value();
  EXPECT_EQ(end_bumping("app", p, true).error(), errc::invalid_txn_state);
  const auto next = end_bumping("app", p, false).value();
  EXPECT_EQ(next, (producer_identity{p.id, producer_epoch{1}}));
  EXPECT_TRUE(markers_.sent.empty()) << "no partition to mark";
  EXPECT_EQ(state_of("app"), txn_state::complete_abort);
  EXPECT_EQ(end_bumping("app", p, false).value(), next) << "a retry";
  EXPECT_EQ(end_bumping("app", next, false).value(), (producer_identity{p.id, producer_epoch{2}}));
}

TEST_F(TxnCoordinator, AnEndAtAnExhaustedEpochRotatesTheProducerId) {
  const auto p = init("app").value();
  log_.items.clear();
  const producer_identity last{p.id, producer_epoch{32766}};
  txn_log_value high{.pid = p.id, .epoch = last.epoch, .timeout_ms = 60000, .last_update_ms = t0};
  log_.append(coordinator_.partition_for("app"), {{encode_txn_key("app"), encode_txn_value(high)}}, [](auto) {});
  lead_all(leader_epoch{4});
  ASSERT_FALSE(add("app", last, {orders0}));
  const auto rotated = end_bumping("app", last, false).value();
  EXPECT_NE(rotated.id, p.id);
  EXPECT_EQ(rotated.epoch, producer_epoch{0});
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.producer, (producer_identity{p.id, producer_epoch{32767}}));
  markers_.answer();
  const auto described = coordinator_.describe("app").value();
  EXPECT_EQ(described.producer, rotated);
  EXPECT_EQ(described.state, txn_state::complete_abort);
  EXPECT_EQ(end_bumping("app", last, false).value(), rotated) << "a retry with the old id";
  ASSERT_FALSE(add("app", rotated, {orders0}));
  lead_all(leader_epoch{5});
  EXPECT_EQ(coordinator_.describe("app").value().producer, rotated) << "read back from the log";
}

TEST_F(TxnCoordinator, ATimedOutTransactionOfVersion2IsFencedPastARetry) {
  const auto p = init("app", std::nullopt, 1000).value();
  ASSERT_FALSE(add("app", p, {orders0}, true));
  now_ += config_.abort_timed_out_interval_ms + 2000;
  coordinator_.tick(now_);
  ASSERT_EQ(markers_.sent.size(), 1u);
  EXPECT_EQ(markers_.sent.front().first.producer.epoch, producer_epoch{2}) << "two bumps";
  markers_.answer();
  EXPECT_EQ(end_bumping("app", p, false).error(), errc::producer_fenced) << "not taken for a retry of an abort";
}

TEST_F(TxnCoordinator, AFailedWriteChangesNothing) {
  const auto p = init("app").value();
  log_.failure = errc::not_coordinator;
  EXPECT_EQ(add("app", p, {orders0}), errc::not_coordinator);
  EXPECT_EQ(state_of("app"), txn_state::empty);
  log_.failure = {};
  EXPECT_FALSE(add("app", p, {orders0}));
}

}  // namespace
}  // namespace ferry::txn
