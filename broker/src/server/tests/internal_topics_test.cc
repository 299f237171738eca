// Creating the coordinators' topics (internal_topics.h) through FindCoordinator and Metadata: see
// handlers_fixture.h. The fixture's cluster starts with broker 1 alone, under the default replication factor 3.
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

constexpr std::int8_t group_key = 0;
constexpr std::int8_t transaction_key = 1;

class internal_topics_test : public handlers_test {
 protected:
  p::find_coordinator_response::coordinator find(std::int8_t key_type) {
    p::find_coordinator_request request;
    request.key_type = key_type;
    request.coordinator_keys = {"k"};
    auto response = run(handlers::handle_find_coordinator, request, 4);
    EXPECT_EQ(response.coordinators.size(), 1u);
    return response.coordinators.empty() ? p::find_coordinator_response::coordinator{} : response.coordinators[0];
  }

  std::int16_t auto_create(const std::string& topic) {
    p::metadata_request request;
    request.topics.emplace().emplace_back().name = topic;
    const auto response = run(handlers::handle_metadata, request, 9);
    EXPECT_EQ(response.topics.size(), 1u);
    return response.topics.empty() ? std::int16_t{-1} : response.topics[0].error_code;
  }

  void add_live_broker(std::int32_t id) {
    cluster_.edit([id](coord::cluster_view& v) {
      const auto host = "127.0.0." + std::to_string(id);
      v.brokers[broker_id{id}] =
          coord::broker_info{broker_id{id}, host, 9092, std::nullopt, {{"PLAINTEXT", "PLAINTEXT", host, 9092}}, id};
    });
  }
};

// A topic created with fewer replicas than its factor would stay under-replicated (a new cluster's brokers start
// one by one), so it waits for the brokers, as in Kafka; lookups say which setting it waits for.
TEST_F(internal_topics_test, are_created_once_as_many_brokers_are_live_as_their_replication_factor) {
  add_live_broker(2);
  for (const auto& [key_type, setting] : {std::pair{group_key, "offsets.topic.replication.factor"},
                                          std::pair{transaction_key, "transaction.state.log.replication.factor"}}) {
    const auto found = find(key_type);
    EXPECT_EQ(found.error_code, p::code(p::error_code::coordinator_not_available));
    EXPECT_EQ(found.error_message.value_or(""),
              std::string("cannot create ") + (key_type == group_key ? "__consumer_offsets" : "__transaction_state") +
                  ": " + setting + " is 3, but 2 brokers are live");
  }
  EXPECT_EQ(auto_create("__consumer_offsets"), p::code(p::error_code::invalid_replication_factor));
  EXPECT_EQ(auto_create("__transaction_state"), p::code(p::error_code::invalid_replication_factor));
  EXPECT_EQ(cluster_.writes, 0);

  add_live_broker(3);
  EXPECT_EQ(find(group_key).error_code, p::code(p::error_code::coordinator_not_available));  // being created
  EXPECT_EQ(auto_create("__transaction_state"), p::code(p::error_code::leader_not_available));
  const auto view = cluster_.view();
  for (const auto* name : {"__consumer_offsets", "__transaction_state"}) {
    const auto* topic = view->find_topic(name);
    ASSERT_NE(topic, nullptr) << name;
    EXPECT_EQ(topic->partitions.size(), 50u) << name;
    for (const auto& [id, partition] : topic->partitions) EXPECT_EQ(partition.replicas.size(), 3u) << name << id;
    EXPECT_EQ(topic->config.at("min.insync.replicas"), "2") << name;
  }
}

// One broker serves its groups and transactions once the factors say 1 (Kafka's single-node config); the
// topics' min.insync.replicas is capped by their replicas.
TEST_F(internal_topics_test, a_single_broker_with_factors_of_one_creates_them) {
  config_.offsets_topic_replication_factor = 1;
  config_.transaction_state_log_replication_factor = 1;
  EXPECT_EQ(find(group_key).error_code, p::code(p::error_code::coordinator_not_available));
  EXPECT_EQ(find(transaction_key).error_code, p::code(p::error_code::coordinator_not_available));
  const auto view = cluster_.view();
  for (const auto* name : {"__consumer_offsets", "__transaction_state"}) {
    const auto* topic = view->find_topic(name);
    ASSERT_NE(topic, nullptr) << name;
    EXPECT_EQ(topic->partitions.begin()->second.replicas, std::vector<broker_id>{broker_id{1}}) << name;
    EXPECT_EQ(topic->config.at("min.insync.replicas"), "1") << name;
  }
  const auto found = find(group_key);
  EXPECT_EQ(found.error_code, 0);
  EXPECT_EQ(found.node_id, broker_id{1});
}

}  // namespace
}  // namespace ferry::server::testing
