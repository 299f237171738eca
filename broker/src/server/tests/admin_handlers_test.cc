// Request handlers of the admin APIs (topics, partitions, elections, reassignments, log dirs): see
// handlers_fixture.h.
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

// Partition counts are checked against max.partitions.per.topic and max.partitions before anything is placed.
TEST_F(handlers_test, create_topics_refuses_partition_counts_past_the_caps) {
  topic("existing", 60);
  p::create_topics_request request;
  request.timeout_ms = 1000;
  for (const auto& [name, count] : std::vector<std::pair<std::string, std::int32_t>>{
           {"huge", INT32_MAX}, {"too-many", 101}, {"fills-the-cluster", 91}, {"fits", 90}}) {
    auto& t = request.topics.emplace_back();
    t.name = name;
    t.num_partitions = count;
    t.replication_factor = 1;
  }
  request.validate_only = true;
  const auto response = run(handlers::handle_create_topics, request, 5);
  ASSERT_EQ(response.topics.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(response.topics[i].error_code, p::code(p::error_code::invalid_partitions)) << response.topics[i].name;
    ASSERT_TRUE(response.topics[i].error_message);
    EXPECT_NE(response.topics[i].error_message->find("max.partitions"), std::string::npos);
  }
  EXPECT_EQ(response.topics[3].error_code, 0);
  EXPECT_EQ(cluster_.writes, 1);  // only the test's own topic
}

TEST_F(handlers_test, create_partitions_refuses_counts_past_the_caps) {
  topic("t", 2);
  p::create_partitions_request request;
  auto& t = request.topics.emplace_back();
  t.name = "t";
  t.count = INT32_MAX;
  request.timeout_ms = 1000;
  const auto response = run(handlers::handle_create_partitions, request, 1);
  ASSERT_EQ(response.results.size(), 1u);
  EXPECT_EQ(response.results[0].error_code, p::code(p::error_code::invalid_partitions));
}

// ElectLeaders hands the partitions to the controller and answers its outcomes by topic; a broker that is
// not the controller says so at the top (v1+) and, for v0, for each partition.
TEST_F(handlers_test, elect_leaders_answers_each_partitions_outcome) {
  p::elect_leaders_request request;
  request.election_type = 0;
  auto& t = request.topic_partitions.emplace().emplace_back();
  t.topic = "a";
  t.partitions = {0, 1};
  cluster_.elections = {{{"a", partition_id{0}}, {}},
                        {{"a", partition_id{1}}, coord::errc::election_not_needed},
                        {{"b", partition_id{0}}, coord::errc::preferred_leader_not_available}};
  auto response = run(handlers::handle_elect_leaders, request, 2);
  ASSERT_EQ(cluster_.elections_asked.size(), 1u);
  EXPECT_EQ(cluster_.elections_asked[0].first, coord::election_type::preferred);
  EXPECT_EQ(cluster_.elections_asked[0].second,
            (std::vector<topic_partition>{{"a", partition_id{0}}, {"a", partition_id{1}}}));
  EXPECT_EQ(response.error_code, 0);
  ASSERT_EQ(response.replica_election_results.size(), 2u);
  const auto& a = response.replica_election_results[0];
  EXPECT_EQ(a.topic, "a");
  ASSERT_EQ(a.partition_result.size(), 2u);
  EXPECT_EQ(a.partition_result[0].error_code, 0);
  EXPECT_FALSE(a.partition_result[0].error_message);
  EXPECT_EQ(a.partition_result[1].error_code, p::code(p::error_code::election_not_needed));
  EXPECT_EQ(response.replica_election_results[1].partition_result[0].error_code,
            p::code(p::error_code::preferred_leader_not_available));

  cluster_.election_error = coord::errc::not_controller;
  response = run(handlers::handle_elect_leaders, request, 0);
  ASSERT_EQ(response.replica_election_results.size(), 1u);
  for (const auto& r : response.replica_election_results[0].partition_result)
    EXPECT_EQ(r.error_code, p::code(p::error_code::not_controller));
  request.election_type = 1;
  response = run(handlers::handle_elect_leaders, request, 1);
  EXPECT_EQ(cluster_.elections_asked.back().first, coord::election_type::unclean);
  EXPECT_EQ(response.error_code, p::code(p::error_code::not_controller));

  request.election_type = 5;
  response = run(handlers::handle_elect_leaders, request, 1);
  EXPECT_EQ(response.error_code, p::code(p::error_code::invalid_request));
  EXPECT_EQ(cluster_.elections_asked.size(), 3u);
}

// AlterPartitionReassignments writes each move into the topic's assignment (target first, what is added and
// removed), ListPartitionReassignments shows it, and a cancel restores the original replicas.
TEST_F(handlers_test, partition_reassignments_start_list_and_cancel) {
  replicated_topic("moving");
  cluster_.edit([](coord::cluster_view& v) {
    v.brokers[broker_id{3}] = coord::broker_info{
        broker_id{3}, "127.0.0.3", 9094, std::nullopt, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.3", 9094}}, 3};
  });
  const auto alter = [&](std::int32_t partition, std::optional<std::vector<std::int32_t>> replicas) {
    p::alter_partition_reassignments_request request;
    auto& t = request.topics.emplace_back();
    t.name = "moving";
    auto& move = t.partitions.emplace_back();
    move.partition_index = partition_id{partition};
    move.replicas = std::move(replicas);
    const auto response = run(handlers::handle_alter_partition_reassignments, request, 0);
    EXPECT_EQ(response.responses.size(), 1u);
    return response.responses.at(0).partitions.at(0).error_code;
  };
  EXPECT_EQ(alter(0, std::vector<std::int32_t>{2, 3}), 0);
  const auto& moved = cluster_.view()->topics.at("moving").partitions.at(partition_id{0});
  EXPECT_EQ(moved.replicas, (std::vector<broker_id>{broker_id{2}, broker_id{3}, broker_id{1}}));
  EXPECT_EQ(moved.adding, std::vector<broker_id>{broker_id{3}});
  EXPECT_EQ(moved.removing, std::vector<broker_id>{broker_id{1}});

  p::list_partition_reassignments_request list;
  auto listed = run(handlers::handle_list_partition_reassignments, list, 0);
  ASSERT_EQ(listed.topics.size(), 1u);
  ASSERT_EQ(listed.topics[0].partitions.size(), 1u);
  EXPECT_EQ(listed.topics[0].partitions[0].replicas, (std::vector<std::int32_t>{2, 3, 1}));
  EXPECT_EQ(listed.topics[0].partitions[0].adding_replicas, std::vector<std::int32_t>{3});
  EXPECT_EQ(listed.topics[0].partitions[0].removing_replicas, std::vector<std::int32_t>{1});

  EXPECT_EQ(alter(0, std::nullopt), 0);  // cancel
  EXPECT_FALSE(cluster_.view()->topics.at("moving").partitions.at(partition_id{0}).reassigning());
  EXPECT_TRUE(run(handlers::handle_list_partition_reassignments, list, 0).topics.empty());
  EXPECT_EQ(alter(0, std::nullopt), p::code(p::error_code::no_reassignment_in_progress));
  EXPECT_EQ(alter(0, std::vector<std::int32_t>{2, 7}), p::code(p::error_code::invalid_replica_assignment));
  EXPECT_EQ(alter(0, std::vector<std::int32_t>{2, 2}), p::code(p::error_code::invalid_replica_assignment));
  EXPECT_EQ(alter(0, std::vector<std::int32_t>{}), p::code(p::error_code::invalid_replica_assignment));
  EXPECT_EQ(alter(5, std::vector<std::int32_t>{2}), p::code(p::error_code::unknown_topic_or_partition));
}

// DescribeLogDirs lists each log dir with the partitions in it, all of them or those asked for.
TEST_F(handlers_test, describe_log_dirs_lists_the_partitions_of_each_dir) {
  topic("dirs", 2);
  p::describe_log_dirs_request request;
  auto all = run(handlers::handle_describe_log_dirs, request, 4);
  ASSERT_EQ(all.results.size(), 1u);
  EXPECT_EQ(all.results[0].error_code, 0);
  EXPECT_FALSE(all.results[0].log_dir.empty());
  ASSERT_EQ(all.results[0].topics.size(), 1u);
  EXPECT_EQ(all.results[0].topics[0].name, "dirs");
  EXPECT_EQ(all.results[0].topics[0].partitions.size(), 2u);
  auto& wanted = request.topics.emplace().emplace_back();
  wanted.topic = "dirs";
  wanted.partitions = {1};
  const auto one = run(handlers::handle_describe_log_dirs, request, 4);
  ASSERT_EQ(one.results.at(0).topics.size(), 1u);
  ASSERT_EQ(one.results[0].topics[0].partitions.size(), 1u);
  EXPECT_EQ(one.results[0].topics[0].partitions[0].partition_index, 1);
  EXPECT_GE(one.results[0].topics[0].partitions[0].partition_size, 0);
}

// CreateTopics v7 answers the new topic's id, Metadata v10+ gives every topic its id and finds a topic by id
// alone, and DeleteTopics v6 deletes by id.
TEST_F(handlers_test, topics_are_described_and_deleted_by_id) {
  p::create_topics_request create;
  create.timeout_ms = 5000;
  auto& wanted = create.topics.emplace_back();
  wanted.name = "orders";
  wanted.num_partitions = 2;
  wanted.replication_factor = 1;
  const auto created = run(handlers::handle_create_topics, create, 7);
  ASSERT_EQ(created.topics.at(0).error_code, 0);
  const auto id = cluster_.view()->find_topic("orders")->topic_id;
  ASSERT_FALSE(id.is_zero());
  EXPECT_EQ(created.topics[0].topic_id, handlers::to_wire(id));

  p::metadata_request all;
  auto described = run(handlers::handle_metadata, all, 12);
  ASSERT_EQ(described.topics.size(), 1u);
  EXPECT_EQ(described.topics[0].topic_id, handlers::to_wire(id));

  p::metadata_request by_id;
  by_id.topics.emplace();
  by_id.topics->emplace_back().topic_id = handlers::to_wire(id);
  by_id.topics->emplace_back().topic_id = handlers::to_wire(coord::uuid::random());
  described = run(handlers::handle_metadata, by_id, 12);
  ASSERT_EQ(described.topics.size(), 2u);
  EXPECT_EQ(described.topics[0].error_code, 0);
  EXPECT_EQ(described.topics[0].name, "orders");
  EXPECT_EQ(described.topics[0].partitions.size(), 2u);
  EXPECT_EQ(described.topics[1].error_code, p::code(p::error_code::unknown_topic_id));

  p::delete_topics_request remove;
  remove.timeout_ms = 5000;
  remove.topics.emplace_back().topic_id = handlers::to_wire(coord::uuid::random());
  remove.topics.emplace_back().topic_id = handlers::to_wire(id);
  const auto deleted = run(handlers::handle_delete_topics, remove, 6);
  ASSERT_EQ(deleted.responses.size(), 2u);
  EXPECT_EQ(deleted.responses[0].error_code, p::code(p::error_code::unknown_topic_id));
  EXPECT_EQ(deleted.responses[1].error_code, 0);
  EXPECT_EQ(deleted.responses[1].name, "orders");
  EXPECT_EQ(cluster_.view()->find_topic("orders"), nullptr);
}

// New topics are placed rack-aware when the brokers have racks (broker.rack): every partition spans both
// zones; a cluster where only some brokers have a rack is refused with the brokers named.
TEST_F(handlers_test, create_topics_places_replicas_across_racks) {
  cluster_.edit([](coord::cluster_view& v) {
    v.brokers[broker_id{1}].rack = "zone-a";
    for (const std::int32_t id : {2, 3, 4})
      v.brokers[broker_id{id}] = coord::broker_info{broker_id{id},
                                                    "127.0.0.1",
                                                    9092 + id,
                                                    id <= 2 ? "zone-a" : "zone-b",
                                                    {{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092 + id}},
                                                    id};
  });
  p::create_topics_request request;
  request.timeout_ms = 1000;
  auto& t = request.topics.emplace_back();
  t.name = "zoned";
  t.num_partitions = 8;
  t.replication_factor = 2;
  auto response = run(handlers::handle_create_topics, request, 5);
  ASSERT_EQ(response.topics.at(0).error_code, 0);
  for (const auto& [p, info] : cluster_.view()->topics.at("zoned").partitions) {
    ASSERT_EQ(info.replicas.size(), 2u);
    EXPECT_NE(info.replicas[0].value() <= 2, info.replicas[1].value() <= 2) << "partition " << p << " in one zone";
  }

  cluster_.edit([](coord::cluster_view& v) { v.brokers[broker_id{4}].rack.reset(); });
  t.name = "half-zoned";
  response = run(handlers::handle_create_topics, request, 5);
  EXPECT_EQ(response.topics.at(0).error_code, p::code(p::error_code::invalid_replica_assignment));
  ASSERT_TRUE(response.topics[0].error_message);
  EXPECT_NE(response.topics[0].error_message->find("broker(s) 4 have none"), std::string::npos);
}

}  // namespace
}  // namespace ferry::server::testing
