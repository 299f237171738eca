// Transactions through the handlers: InitProducerId, AddPartitionsToTxn, a transactional Produce verified with
// the coordinator (KIP-890 part 1), EndTxn with its markers written to the partition, TxnOffsetCommit held until
// the marker, WriteTxnMarkers from another coordinator, and DescribeTransactions/ListTransactions. The
// coordinator's log is in memory; its markers go through the real marker path to partitions led here. See
// handlers_fixture.h.
#include <algorithm>
#include <chrono>
#include <thread>

#include "model/testing/batch_builder.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

constexpr std::int8_t read_committed = 1;

class transactions_test : public handlers_test {
 protected:
  void SetUp() override {
    handlers_test::SetUp();
    topic("__transaction_state", 1);  // led here, so verification asks this broker's coordinator
    topic("out", 1);
  }

  txn::producer_identity init(const std::string& id) {
    p::init_producer_id_request request;
    request.transactional_id = id;
    request.transaction_timeout_ms = 60000;
    const auto response = run(handlers::handle_init_producer_id, request, 4);
    EXPECT_EQ(response.error_code, 0);
    return {response.producer_id, response.producer_epoch};
  }
  p::add_partitions_to_txn_response add(const std::string& id, txn::producer_identity producer,
                                        std::vector<std::pair<std::string, std::int32_t>> partitions) {
    p::add_partitions_to_txn_request request;
    request.v3_and_below_transactional_id = id;
    request.v3_and_below_producer_id = producer.id;
    request.v3_and_below_producer_epoch = producer.epoch;
    for (const auto& [name, index] : partitions) {
      if (request.v3_and_below_topics.empty() || request.v3_and_below_topics.back().name != name)
        request.v3_and_below_topics.emplace_back().name = name;
      request.v3_and_below_topics.back().partitions.push_back(index);
    }
    return run(handlers::handle_add_partitions_to_txn, request, 3);
  }
  std::int16_t produce_txn(const std::string& id, txn::producer_identity producer, std::int32_t sequence,
                           std::int16_t version = 9) {
    auto batch = model::testing::build_batch({.records = {{.value = "a"}, {.value = "b"}},
                                              .producer = producer.id,
                                              .epoch = producer.epoch,
                                              .base_sequence = sequence,
                                              .transactional = true});
    auto request = produce("out", batch, -1);
    request.transactional_id = id;
    return run(handlers::handle_produce, request, version).responses[0].partition_responses[0].error_code;
  }
  std::int16_t end(const std::string& id, txn::producer_identity producer, bool commit) {
    return end_at(id, producer, commit, 3).error_code;
  }
  p::end_txn_response end_at(const std::string& id, txn::producer_identity producer, bool commit,
                             std::int16_t version) {
    p::end_txn_request request;
    request.transactional_id = id;
    request.producer_id = producer.id;
    request.producer_epoch = producer.epoch;
    request.committed = commit;
    return run(handlers::handle_end_txn, request, version);
  }
  offset last_stable() {
    auto request = consumer_fetch("out", 0, "", read_committed);
    return run(handlers::handle_fetch, request, 11).responses[0].partitions[0].last_stable_offset;
  }
  std::string state_of(const std::string& id) {
    p::describe_transactions_request request;
    request.transactional_ids = {id};
    return run(handlers::handle_describe_transactions, request, 0).transaction_states[0].transaction_state;
  }
  // Markers are written on the background thread: waits for `condition`, at most 10 s.
  template <typename F>
  bool eventually(F condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!condition()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
};

TEST_F(transactions_test, a_committed_transaction_becomes_readable_once_its_marker_is_written) {
  const auto producer = init("app");
  EXPECT_EQ(produce_txn("app", producer, 0), p::code(p::error_code::invalid_txn_state))
      << "the partition is not in the transaction yet";
  const auto added = add("app", producer, {{"out", 0}});
  ASSERT_EQ(added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code, 0);
  ASSERT_EQ(produce_txn("app", producer, 0), 0);
  EXPECT_EQ(produce_txn("app", producer, 2), 0) << "the transaction is open here: no second verification";
  EXPECT_EQ(last_stable(), offset{0});
  EXPECT_EQ(state_of("app"), "Ongoing");

  ASSERT_EQ(end("app", producer, true), 0);
  ASSERT_TRUE(eventually([&] { return last_stable() == offset{5}; })) << "4 records and the commit marker";
  ASSERT_TRUE(eventually([&] { return state_of("app") == "CompleteCommit"; }));
  EXPECT_EQ(end("app", producer, false), p::code(p::error_code::invalid_txn_state));
}

TEST_F(transactions_test, transaction_version_2_adds_partitions_on_produce_and_bumps_the_epoch_at_every_end) {
  const auto producer = init("app");
  ASSERT_EQ(produce_txn("app", producer, 0, 12), 0) << "Produce v12 adds the partition to the transaction";
  EXPECT_EQ(state_of("app"), "Ongoing");
  const auto ended = end_at("app", producer, true, 5);
  ASSERT_EQ(ended.error_code, 0);
  const txn::producer_identity next{producer.id, producer_epoch{static_cast<std::int16_t>(producer.epoch.value() + 1)}};
  EXPECT_EQ(ended.producer_id, next.id);
  EXPECT_EQ(ended.producer_epoch, next.epoch);
  ASSERT_TRUE(eventually([&] { return last_stable() == offset{3}; })) << "2 records and the commit marker";
  ASSERT_TRUE(eventually([&] { return state_of("app") == "CompleteCommit"; }));
  // A late batch of the committed transaction cannot join the next one: the marker carried the new epoch.
  EXPECT_EQ(produce_txn("app", producer, 2, 12), p::code(p::error_code::invalid_producer_epoch));
  ASSERT_EQ(produce_txn("app", next, 0, 12), 0) << "the next transaction starts at sequence 0";
  EXPECT_EQ(end_at("app", producer, true, 5).error_code, p::code(p::error_code::producer_fenced));
  const auto aborted = end_at("app", next, false, 5);
  ASSERT_EQ(aborted.error_code, 0);
  EXPECT_EQ(aborted.producer_epoch.value(), next.epoch.value() + 1);
}

TEST_F(transactions_test, api_versions_finalizes_the_configured_transaction_version) {
  const auto range_of = [](const p::api_versions_response& r, std::int16_t key) {
    const auto it = std::find_if(r.api_keys.begin(), r.api_keys.end(), [&](const auto& a) { return a.api_key == key; });
    return it == r.api_keys.end() ? -1 : it->max_version;
  };
  p::api_versions_request request;
  auto response = run(handlers::handle_api_versions, request, 3);
  ASSERT_EQ(response.finalized_features.size(), 1u);
  EXPECT_EQ(response.finalized_features[0].name, "transaction.version");
  EXPECT_EQ(response.finalized_features[0].max_version_level, 2);
  EXPECT_GE(response.finalized_features_epoch, 0) << "clients ignore epochs below 0";
  EXPECT_EQ(range_of(response, p::end_txn_request::api_key), 5);
  EXPECT_EQ(range_of(response, p::produce_request::api_key), 12);

  config_.transaction_version = 1;
  response = run(handlers::handle_api_versions, request, 3);
  ASSERT_EQ(response.finalized_features.size(), 1u);
  EXPECT_EQ(response.finalized_features[0].max_version_level, 1);
  EXPECT_EQ(range_of(response, p::end_txn_request::api_key), 4);
  EXPECT_EQ(range_of(response, p::txn_offset_commit_request::api_key), 4);
  EXPECT_EQ(range_of(response, p::produce_request::api_key), 11);
  ASSERT_EQ(response.supported_features.size(), 1u);
  EXPECT_EQ(response.supported_features[0].max_version, 2);
}

TEST_F(transactions_test, unknown_partitions_fail_alone_and_the_others_are_not_attempted) {
  const auto producer = init("app");
  const auto added = add("app", producer, {{"nope", 0}, {"out", 0}});
  EXPECT_EQ(added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
            p::code(p::error_code::unknown_topic_or_partition));
  EXPECT_EQ(added.results_by_topic_v3_and_below[1].results_by_partition[0].partition_error_code,
            p::code(p::error_code::operation_not_attempted));
  EXPECT_EQ(state_of("app"), "Empty");
}

TEST_F(transactions_test, a_fenced_producer_gets_the_error_of_its_request_version) {
  const auto zombie = init("app");
  const auto current = init("app");
  EXPECT_EQ(current.epoch, producer_epoch{1});
  p::add_partitions_to_txn_request request;
  request.v3_and_below_transactional_id = "app";
  request.v3_and_below_producer_id = zombie.id;
  request.v3_and_below_producer_epoch = zombie.epoch;
  request.v3_and_below_topics.push_back({"out", {0}});
  EXPECT_EQ(run(handlers::handle_add_partitions_to_txn, request, 3)
                .results_by_topic_v3_and_below[0]
                .results_by_partition[0]
                .partition_error_code,
            p::code(p::error_code::producer_fenced));
  EXPECT_EQ(run(handlers::handle_add_partitions_to_txn, request, 1)
                .results_by_topic_v3_and_below[0]
                .results_by_partition[0]
                .partition_error_code,
            p::code(p::error_code::invalid_producer_epoch))
      << "before KIP-588";
}

TEST_F(transactions_test, transactional_offsets_are_invisible_until_the_transaction_commits) {
  const auto offsets_partition = groups_.partition_for("g");
  ASSERT_EQ(groups_.lead({{offsets_partition, leader_epoch{0}}}), std::vector{offsets_partition});
  ASSERT_TRUE(groups_.load(offsets_partition, clock_.now_ms()));
  const auto producer = init("app");
  p::add_offsets_to_txn_request add_offsets;
  add_offsets.transactional_id = "app";
  add_offsets.producer_id = producer.id;
  add_offsets.producer_epoch = producer.epoch;
  add_offsets.group_id = "g";
  ASSERT_EQ(run(handlers::handle_add_offsets_to_txn, add_offsets, 3).error_code, 0);

  p::txn_offset_commit_request commit;
  commit.transactional_id = "app";
  commit.group_id = "g";
  commit.producer_id = producer.id;
  commit.producer_epoch = producer.epoch;
  auto& t = commit.topics.emplace_back();
  t.name = "out";
  t.partitions.push_back({.partition_index = partition_id{0}, .committed_offset = offset{42}});
  ASSERT_EQ(run(handlers::handle_txn_offset_commit, commit, 3).topics[0].partitions[0].error_code, 0);

  p::offset_fetch_request fetch;
  fetch.group_id = "g";
  fetch.require_stable = true;
  fetch.topics.emplace().push_back({"out", {0}});
  auto fetched = run(handlers::handle_offset_fetch, fetch, 7).topics[0].partitions[0];
  EXPECT_EQ(fetched.error_code, p::code(p::error_code::unstable_offset_commit));
  fetch.require_stable = false;
  EXPECT_EQ(run(handlers::handle_offset_fetch, fetch, 7).topics[0].partitions[0].committed_offset, no_offset);

  // __consumer_offsets is not a partition here, so the marker's write there fails; the group learns of the
  // commit from the marker the way the marker path tells it.
  ASSERT_EQ(end("app", producer, true), 0);
  groups_.complete_txn(groups_.partition_for("g"), producer.id, true);
  fetch.require_stable = true;
  fetched = run(handlers::handle_offset_fetch, fetch, 7).topics[0].partitions[0];
  EXPECT_EQ(fetched.error_code, 0);
  EXPECT_EQ(fetched.committed_offset, offset{42});
}

TEST_F(transactions_test, write_txn_markers_ends_another_coordinators_transaction_here) {
  auto batch = model::testing::build_batch({.records = {{.value = "x"}},
                                            .producer = producer_id{88},
                                            .epoch = producer_epoch{3},
                                            .base_sequence = 0,
                                            .transactional = true});
  ASSERT_TRUE(partitions_->leader_for({"out", partition_id{0}}).value()->append(batch));
  EXPECT_EQ(last_stable(), offset{0});
  p::write_txn_markers_request request;
  auto& marker = request.markers.emplace_back();
  marker.producer_id = producer_id{88};
  marker.producer_epoch = producer_epoch{3};
  marker.transaction_result = false;
  marker.coordinator_epoch = 5;
  marker.topics.push_back({"out", {0}});
  marker.topics.push_back({"missing", {0}});
  const auto response = run(handlers::handle_write_txn_markers, request, 1);
  ASSERT_EQ(response.markers.size(), 1u);
  EXPECT_EQ(response.markers[0].topics[0].partitions[0].error_code, 0);
  EXPECT_NE(response.markers[0].topics[1].partitions[0].error_code, 0);
  EXPECT_EQ(last_stable(), offset{2});
  marker.coordinator_epoch = 4;
  EXPECT_EQ(run(handlers::handle_write_txn_markers, request, 1).markers[0].topics[0].partitions[0].error_code,
            p::code(p::error_code::transaction_coordinator_fenced));
}

TEST_F(transactions_test, list_transactions_filters_by_state_and_producer) {
  const auto a = init("a");
  init("b");
  ASSERT_EQ(add("a", a, {{"out", 0}}).results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code, 0);
  p::list_transactions_request request;
  request.state_filters = {"Ongoing", "Bogus"};
  auto listed = run(handlers::handle_list_transactions, request, 1);
  ASSERT_EQ(listed.transaction_states.size(), 1u);
  EXPECT_EQ(listed.transaction_states[0].transactional_id, "a");
  EXPECT_EQ(listed.unknown_state_filters, std::vector<std::string>{"Bogus"});
  request.state_filters.clear();
  request.producer_id_filters = {a.id.value()};
  EXPECT_EQ(run(handlers::handle_list_transactions, request, 1).transaction_states.size(), 1u);
  request.producer_id_filters.clear();
  EXPECT_EQ(run(handlers::handle_list_transactions, request, 1).transaction_states.size(), 2u);
}

}  // namespace
}  // namespace ferry::server::testing
