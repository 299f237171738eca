// read_committed consumers (isolation.level=read_committed): Fetch stops at the last stable offset while a
// transaction is open and names the aborted transactions of what it returns; ListOffsets latest answers the last
// stable offset; DescribeProducers shows the transactions. See handlers_fixture.h.
#include "model/testing/batch_builder.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

constexpr std::int8_t read_uncommitted = 0;
constexpr std::int8_t read_committed = 1;

p::list_offsets_request latest_offset(const std::string& topic, std::int8_t isolation) {
  p::list_offsets_request request;
  request.isolation_level = isolation;
  auto& t = request.topics.emplace_back();
  t.name = topic;
  auto& part = t.partitions.emplace_back();
  part.partition_index = partition_id{0};
  part.timestamp = -1;
  return request;
}

class read_committed_test : public handlers_test {
 protected:
  // Partition 0 of "txn": a plain batch at 0-2, then producer 77's open transaction at 3-4.
  void SetUp() override {
    handlers_test::SetUp();
    topic("txn", 1);
    partition_ = partitions_->leader_for({"txn", partition_id{0}}).value();
    auto plain = model::testing::build_simple_batch(3);
    plain_bytes_ = plain.size();
    ASSERT_TRUE(partition_->append(plain));
    auto txn = model::testing::build_batch({.records = {{.value = "a"}, {.value = "b"}},
                                            .producer = producer_id{77},
                                            .epoch = producer_epoch{0},
                                            .base_sequence = 0,
                                            .transactional = true});
    txn_bytes_ = txn.size();
    ASSERT_TRUE(partition_->append(txn));
  }
  p::fetch_response::fetchable_topic_response::partition_data fetch(std::int8_t isolation) {
    auto request = consumer_fetch("txn", 0, "", isolation);
    return run(handlers::handle_fetch, request, 11).responses[0].partitions[0];
  }
  // Partitions 0 and 7 (which does not exist) of "txn".
  p::describe_producers_response::describe_producers_topic_response describe_producers() {
    p::describe_producers_request request;
    auto& t = request.topics.emplace_back();
    t.name = "txn";
    t.partition_indexes = {0, 7};
    return run(handlers::handle_describe_producers, request, 0).topics[0];
  }
  offset latest(std::int8_t isolation) {
    auto request = latest_offset("txn", isolation);
    return run(handlers::handle_list_offsets, request, 5).topics[0].partitions[0].offset;
  }

  std::shared_ptr<replication::partition> partition_;
  std::size_t plain_bytes_ = 0;
  std::size_t txn_bytes_ = 0;
};

TEST_F(read_committed_test, an_open_transaction_is_not_read_until_it_ends) {
  const auto committed = fetch(read_committed);
  ASSERT_EQ(committed.error_code, 0);
  EXPECT_EQ(committed.high_watermark, offset{5});
  EXPECT_EQ(committed.last_stable_offset, offset{3});
  EXPECT_EQ(committed.records->size(), plain_bytes_);
  EXPECT_TRUE(committed.aborted_transactions->empty());
  EXPECT_EQ(latest(read_committed), offset{3});

  const auto uncommitted = fetch(read_uncommitted);
  EXPECT_EQ(uncommitted.last_stable_offset, offset{3});
  EXPECT_EQ(uncommitted.records->size(), plain_bytes_ + txn_bytes_);
  EXPECT_EQ(latest(read_uncommitted), offset{5});
}

TEST_F(read_committed_test, an_aborted_transaction_is_returned_with_its_abort_named) {
  ASSERT_TRUE(partition_->append_marker(producer_id{77}, producer_epoch{0}, {model::marker_type::abort, 0}));
  const auto committed = fetch(read_committed);
  ASSERT_EQ(committed.error_code, 0);
  EXPECT_EQ(committed.last_stable_offset, offset{6});
  EXPECT_GT(committed.records->size(), plain_bytes_ + txn_bytes_);  // the marker too
  ASSERT_EQ(committed.aborted_transactions->size(), 1u);
  EXPECT_EQ((*committed.aborted_transactions)[0].producer_id, producer_id{77});
  EXPECT_EQ((*committed.aborted_transactions)[0].first_offset, offset{3});
  EXPECT_EQ(latest(read_committed), offset{6});
}

TEST_F(read_committed_test, a_committed_transaction_is_read_with_nothing_aborted) {
  ASSERT_TRUE(partition_->append_marker(producer_id{77}, producer_epoch{0}, {model::marker_type::commit, 0}));
  const auto committed = fetch(read_committed);
  EXPECT_EQ(committed.last_stable_offset, offset{6});
  EXPECT_TRUE(committed.aborted_transactions->empty());
  // A stale coordinator's marker is refused with Kafka's code, and writes nothing.
  EXPECT_EQ(partition_->append_marker(producer_id{77}, producer_epoch{0}, {model::marker_type::abort, -5}).error(),
            storage::errc::coordinator_fenced);
  EXPECT_EQ(partition_->log_end_offset(), offset{6});
}

// kafka-transactions.sh describe-producers: producer 77's open transaction, then its marker's coordinator epoch.
TEST_F(read_committed_test, describe_producers_shows_open_transactions_and_coordinator_epochs) {
  auto topic = describe_producers();
  ASSERT_EQ(topic.partitions.size(), 2u);
  EXPECT_EQ(topic.partitions[1].error_code, p::code(p::error_code::unknown_topic_or_partition));
  ASSERT_EQ(topic.partitions[0].active_producers.size(), 1u);
  auto producer = topic.partitions[0].active_producers[0];
  EXPECT_EQ(producer.producer_id, producer_id{77});
  EXPECT_EQ(producer.producer_epoch, 0);
  EXPECT_EQ(producer.last_sequence, 1);
  EXPECT_EQ(producer.coordinator_epoch, -1);
  EXPECT_EQ(producer.current_txn_start_offset, 3);

  ASSERT_TRUE(partition_->append_marker(producer_id{77}, producer_epoch{0}, {model::marker_type::commit, 4}));
  producer = describe_producers().partitions[0].active_producers[0];
  EXPECT_EQ(producer.coordinator_epoch, 4);
  EXPECT_EQ(producer.current_txn_start_offset, -1);
}

// find-hanging asks each broker about the partitions it hosts, followed ones included.
TEST_F(read_committed_test, a_follower_describes_its_producers_too) {
  partition_->become_follower(leader_epoch{1}, broker_id{2});
  const auto topic = describe_producers();
  ASSERT_EQ(topic.partitions[0].error_code, 0);
  ASSERT_EQ(topic.partitions[0].active_producers.size(), 1u);
  EXPECT_EQ(topic.partitions[0].active_producers[0].current_txn_start_offset, 3);
}

}  // namespace
}  // namespace ferry::server::testing
