// Request handlers against real partitions and logs (in a temporary directory) and a cluster given by the test
// through the handlers' small interfaces (broker_context.h), so each case sets up exactly the cluster it needs.
#include "server/handlers/handlers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "coord/errc.h"
#include "coord/reassignment.h"
#include "model/records.h"
#include "model/testing/batch_builder.h"
#include "server/broker_context.h"

namespace ferry::server {
namespace {
namespace asio = boost::asio;
namespace p = protocol;

// The zxid of every partition state the tests write: after the brokers registered (broker_info::epoch 1 and 2),
// so the leaders they name lead.
constexpr std::int64_t written = 10;

// The cluster as the test wants it: a view it edits, and the writes handlers make, recorded and applied to it.
class test_cluster final : public cluster_metadata, public cluster_writes {
 public:
  test_cluster() {
    auto v = std::make_shared<coord::cluster_view>();
    v->brokers[broker_id{1}] = coord::broker_info{broker_id{1}, "127.0.0.1", 9092, std::nullopt, {}, 1};
    v->controller = broker_id{1};
    view_ = v;
  }

  [[nodiscard]] std::shared_ptr<const coord::cluster_view> view() const override {
    std::lock_guard lock(mutex_);
    return view_;
  }
  void edit(const std::function<void(coord::cluster_view&)>& change) {
    std::lock_guard lock(mutex_);
    auto next = std::make_shared<coord::cluster_view>(*view_);
    change(*next);
    next->index_topic_ids();
    view_ = next;
  }

  result<coord::uuid> create_topic(std::string_view name, const coord::layout::replica_assignment& assignment,
                                   const coord::layout::config_map& config) override {
    ++writes;
    const auto id = coord::uuid::random();
    edit([&](coord::cluster_view& v) {
      auto& topic = v.topics[std::string(name)];
      topic.topic_id = id;
      topic.config = config;
      for (const auto& [id, replicas] : assignment)
        topic.partitions[id] = {
            replicas, coord::partition_state{replicas.front(), leader_epoch{0}, {replicas.front()}, 1, 0, written}};
    });
    return id;
  }
  result<void> delete_topic(std::string_view name) override {
    ++writes;
    edit([&](coord::cluster_view& v) { v.topics.erase(std::string(name)); });
    return success();
  }
  result<void> set_topic_config(std::string_view, const coord::layout::config_map&) override {
    ++writes;
    return success();
  }
  result<coord::layout::config_map> read_topic_config(std::string_view) override { return coord::layout::config_map{}; }
  result<void> add_partitions(std::string_view, const coord::layout::replica_assignment&) override {
    ++writes;
    return success();
  }
  // Applies the change to the view's assignment, as ZooKeeper would hold it.
  result<void> alter_assignment(std::string_view name,
                                const std::function<result<bool>(coord::layout::topic_assignment&)>& change) override {
    const auto* topic = view()->find_topic(name);
    if (topic == nullptr) return coord::errc::no_node;
    coord::layout::topic_assignment assignment;
    for (const auto& [p, info] : topic->partitions)
      coord::set_assignment(assignment, p, {info.replicas, info.adding, info.removing});
    FERRY_TRY(const bool changed, change(assignment));
    if (!changed) return success();
    ++writes;
    edit([&](coord::cluster_view& v) {
      for (auto& [p, info] : v.topics.at(std::string(name)).partitions) {
        auto moved = coord::assignment_of(assignment, p);
        info.replicas = std::move(moved.replicas);
        info.adding = std::move(moved.adding);
        info.removing = std::move(moved.removing);
      }
    });
    return success();
  }
  result<coord::layout::producer_id_block> allocate_producer_id_block() override {
    const std::int64_t first = next_block_;
    next_block_ += coord::layout::producer_id_block_size;
    return coord::layout::producer_id_block{broker_id{1}, first, first + coord::layout::producer_id_block_size - 1};
  }
  result<std::vector<coord::election_result>> elect_leaders(
      coord::election_type type, const std::optional<std::vector<topic_partition>>& partitions,
      std::chrono::milliseconds) override {
    elections_asked.emplace_back(type, partitions);
    if (election_error) return election_error;
    return elections;
  }

  int writes = 0;
  std::vector<std::pair<coord::election_type, std::optional<std::vector<topic_partition>>>> elections_asked;
  std::vector<coord::election_result> elections;  // what elect_leaders answers, unless election_error is set
  std::error_code election_error;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const coord::cluster_view> view_;
  std::int64_t next_block_ = 0;
};

class handlers_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ferry-handlers-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    config_.broker_id = 1;
    config_.max_partitions_per_topic = 100;
    config_.max_partitions = 150;
    logs_ = storage::log_manager::open({.fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {dir_}}).value();
    partitions_ = std::make_unique<replication::partition_manager>(*logs_, config_, metrics_);
    ids_ = std::make_unique<producer_ids>(cluster_);
    context_ = std::make_unique<broker_context>(
        broker_context{config_, cluster_, cluster_, *partitions_, metrics_, *ids_, pool_, clock_});
  }
  void TearDown() override {
    pool_.join();
    (void)partitions_->close_all();
    std::filesystem::remove_all(dir_);
  }

  // A topic led here, with its partitions opened.
  void topic(const std::string& name, int partitions, coord::layout::config_map config = {}) {
    coord::layout::replica_assignment assignment;
    for (int i = 0; i < partitions; ++i) assignment[partition_id{i}] = {broker_id{1}};
    ASSERT_TRUE(cluster_.create_topic(name, assignment, config));
    partitions_->reconcile(*cluster_.view());
  }

  // Runs one handler to completion on an event loop of the test's own.
  template <typename Response, typename Request>
  Response run(asio::awaitable<Response> (*handler)(request_context&, Request&), Request& request, std::int16_t version,
               asio::io_context* io = nullptr) {
    asio::io_context own;
    auto& loop = io != nullptr ? *io : own;
    const p::request_header header{Request::api_key, version, 1, "test"};
    request_context ctx{*context_, header, connection_};
    std::optional<Response> out;
    asio::co_spawn(loop, handler(ctx, request), [&](std::exception_ptr e, Response r) {
      if (e) std::rethrow_exception(e);
      out = std::move(r);
    });
    loop.run();
    return std::move(*out);
  }

  static p::produce_request produce(const std::string& topic, std::vector<std::byte>& batch, std::int16_t acks = 1) {
    p::produce_request request;
    request.acks = acks;
    request.timeout_ms = 1000;
    auto& t = request.topic_data.emplace_back();
    t.name = topic;
    auto& part = t.partition_data.emplace_back();
    part.index = partition_id{0};
    part.records.emplace();
    part.records->bytes = batch;
    return request;
  }

  // A topic led here in epoch 0, with broker 2 a follower in the ISR.
  void replicated_topic(const std::string& name, coord::layout::config_map config = {}) {
    cluster_.edit([&](coord::cluster_view& v) {
      v.brokers[broker_id{2}] = coord::broker_info{broker_id{2}, "127.0.0.2", 9093, std::nullopt, {}, 2};
      auto& topic = v.topics[name];
      topic.config = std::move(config);
      topic.partitions[partition_id{0}] = {
          {broker_id{1}, broker_id{2}},
          coord::partition_state{broker_id{1}, leader_epoch{0}, {broker_id{1}, broker_id{2}}, 1, 0, written}};
    });
    partitions_->reconcile(*cluster_.view());
  }

  // Broker 2's fetch of partition 0, as a follower (v12 carries the replica id and the last fetched epoch).
  static p::fetch_request follower_fetch(const std::string& topic, std::int64_t from, std::int32_t last_epoch = -1) {
    p::fetch_request request;
    request.replica_id = broker_id{2};
    request.max_wait_ms = 0;
    request.min_bytes = 1;
    request.max_bytes = 1 << 20;
    auto& t = request.topics.emplace_back();
    t.topic = topic;
    auto& part = t.partitions.emplace_back();
    part.partition = partition_id{0};
    part.fetch_offset = offset{from};
    part.last_fetched_epoch = leader_epoch{last_epoch};
    part.partition_max_bytes = 1 << 20;
    return request;
  }

  // Starts a produce on `io` and runs it until it waits.
  void start_produce(asio::io_context& io, p::produce_request& request, std::optional<p::produce_response>& out) {
    produce_header_ = p::request_header{p::produce_request::api_key, 7, 1, "test"};
    contexts_.push_back(std::make_unique<request_context>(request_context{*context_, produce_header_, connection_}));
    asio::co_spawn(io, handlers::handle_produce(*contexts_.back(), request),
                   [&out](std::exception_ptr e, p::produce_response r) {
                     if (e) std::rethrow_exception(e);
                     out = std::move(r);
                   });
    io.poll();
  }

  p::request_header produce_header_;
  std::vector<std::unique_ptr<request_context>> contexts_;
  test_cluster cluster_;
  config::broker_config config_;
  manual_clock clock_;
  metrics::broker_metrics metrics_;
  asio::thread_pool pool_{1};
  std::filesystem::path dir_;
  std::unique_ptr<storage::log_manager> logs_;
  std::unique_ptr<replication::partition_manager> partitions_;
  std::unique_ptr<producer_ids> ids_;
  std::unique_ptr<broker_context> context_;
  net::connection_info connection_{1, "127.0.0.1:1"};
};

// A non-transactional InitProducerId that names an existing id gets a fresh id at epoch 0, as in Kafka:
// bumping that id's epoch would fence the producer that owns it.
TEST_F(handlers_test, init_producer_id_never_bumps_an_idempotent_producers_epoch) {
  p::init_producer_id_request first;
  const auto a = run(handlers::handle_init_producer_id, first, 3);
  ASSERT_EQ(a.error_code, 0);
  EXPECT_EQ(a.producer_epoch, producer_epoch{0});
  p::init_producer_id_request again;
  again.producer_id = a.producer_id;
  again.producer_epoch = a.producer_epoch;
  const auto b = run(handlers::handle_init_producer_id, again, 3);
  ASSERT_EQ(b.error_code, 0);
  EXPECT_NE(b.producer_id, a.producer_id);
  EXPECT_EQ(b.producer_epoch, producer_epoch{0});
}

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
    v.brokers[broker_id{3}] = coord::broker_info{broker_id{3}, "127.0.0.3", 9094, std::nullopt, {}, 3};
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

// acks=all with fewer in-sync replicas than min.insync.replicas is refused, not acknowledged.
TEST_F(handlers_test, acks_all_needs_min_insync_replicas) {
  topic("strict", 1, {{"min.insync.replicas", "2"}});
  auto batch = model::testing::build_simple_batch(2);
  auto all = produce("strict", batch, -1);
  const auto refused = run(handlers::handle_produce, all, 7);
  EXPECT_EQ(refused.responses[0].partition_responses[0].error_code, p::code(p::error_code::not_enough_replicas));
  auto one = produce("strict", batch, 1);
  const auto accepted = run(handlers::handle_produce, one, 7);
  EXPECT_EQ(accepted.responses[0].partition_responses[0].error_code, 0);
  EXPECT_EQ(accepted.responses[0].partition_responses[0].base_offset, offset{0});
}

// An idempotent producer's batch that does not follow its last stored one is OUT_OF_ORDER_SEQUENCE_NUMBER, and
// the answer says what the partition holds of that producer (the client logs it; so does the broker).
TEST_F(handlers_test, an_out_of_order_sequence_says_what_the_partition_holds) {
  topic("idempotent", 1);
  const auto batch_at = [](std::int32_t sequence) {
    return model::testing::build_batch({.records = {{.value = "v"}, {.value = "w"}},
                                        .producer = producer_id{1000},
                                        .epoch = producer_epoch{0},
                                        .base_sequence = sequence});
  };
  auto first = batch_at(0);
  auto in_order = produce("idempotent", first);
  EXPECT_EQ(run(handlers::handle_produce, in_order, 7).responses[0].partition_responses[0].error_code, 0);
  auto gap = batch_at(5);
  auto skipped = produce("idempotent", gap);
  const auto answer = run(handlers::handle_produce, skipped, 7).responses[0].partition_responses[0];
  EXPECT_EQ(answer.error_code, p::code(p::error_code::out_of_order_sequence_number));
  ASSERT_TRUE(answer.error_message);
  EXPECT_EQ(*answer.error_message,
            "sequences 5..6 of producer 1000 epoch 0 do not follow its last batch here, sequences 0..1 of epoch 0 at "
            "offsets 0..1");
}

// compression.type: the batch is stored in the topic's codec, whatever the producer sent.
TEST_F(handlers_test, produce_recompresses_for_the_topics_compression_type) {
  topic("zstd-topic", 1, {{"compression.type", "zstd"}});
  auto batch = model::testing::build_simple_batch(20);
  auto request = produce("zstd-topic", batch);
  const auto response = run(handlers::handle_produce, request, 7);
  ASSERT_EQ(response.responses[0].partition_responses[0].error_code, 0);
  auto p = partitions_->leader_for({"zstd-topic", partition_id{0}}).value();
  const auto read = p->read(offset{0}, 1 << 20).value();
  ASSERT_EQ(read.slices.size(), 1u);
  std::vector<std::byte> stored(read.slices[0].length);
  ASSERT_TRUE(read.slices[0].file->read_at(stored, read.slices[0].position));
  const model::batch_header_view header(stored);
  EXPECT_EQ(header.codec(), model::compression::zstd);
  EXPECT_EQ(header.records_count(), 20);
  EXPECT_TRUE(model::validate_records(stored, 1 << 20));
}

// A long poll registers on its partitions before reading, wakes on an append long before its max wait, and
// leaves no registration behind.
TEST_F(handlers_test, fetch_long_polls_wake_on_append_and_leave_nothing_behind) {
  topic("t", 1);
  auto p = partitions_->leader_for({"t", partition_id{0}}).value();
  asio::io_context io;
  p::fetch_request request;
  request.max_wait_ms = 10000;
  request.min_bytes = 1;
  auto& t = request.topics.emplace_back();
  t.topic = "t";
  auto& wanted = t.partitions.emplace_back();
  wanted.partition = partition_id{0};
  wanted.partition_max_bytes = 1 << 20;
  // The append comes from another thread while the fetch waits.
  std::thread producer([&] {
    while (p->waiter_count() == 0) std::this_thread::yield();
    auto batch = model::testing::build_simple_batch(3);
    ASSERT_TRUE(p->append(batch));
  });
  const auto started = std::chrono::steady_clock::now();
  const auto response = run(handlers::handle_fetch, request, 11, &io);
  producer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ASSERT_EQ(response.responses[0].partitions[0].error_code, 0);
  EXPECT_GT(response.responses[0].partitions[0].records->size(), 0u);
  EXPECT_EQ(p->waiter_count(), 0u);
}

// A deleted topic next to a live one does not end the wait (Kafka keeps such partitions out of the early
// answer); all-unknown answers at once.
TEST_F(handlers_test, fetch_of_an_unknown_topic_waits_for_the_known_ones) {
  topic("live", 1);
  p::fetch_request request;
  request.max_wait_ms = 300;
  request.min_bytes = 1;
  for (const char* name : {"live", "deleted"}) {
    auto& t = request.topics.emplace_back();
    t.topic = name;
    t.partitions.emplace_back().partition_max_bytes = 1 << 20;
  }
  auto started = std::chrono::steady_clock::now();
  auto response = run(handlers::handle_fetch, request, 11);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300));
  EXPECT_EQ(response.responses[0].partitions[0].error_code, 0);
  EXPECT_EQ(response.responses[1].partitions[0].error_code, p::code(p::error_code::unknown_topic_or_partition));
  EXPECT_EQ(response.responses[1].partitions[0].high_watermark, no_offset);

  request.topics.erase(request.topics.begin());
  request.max_wait_ms = 10000;
  started = std::chrono::steady_clock::now();
  response = run(handlers::handle_fetch, request, 11);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(response.responses[0].partitions[0].error_code, p::code(p::error_code::unknown_topic_or_partition));
}

// A partition the cluster knows but this broker does not lead answers at once with NOT_LEADER_OR_FOLLOWER,
// and names the leader and its address (KIP-951), so the client goes there without a metadata refresh.
TEST_F(handlers_test, fetch_from_a_non_leader_answers_at_once_and_points_to_the_leader) {
  cluster_.edit([](coord::cluster_view& v) {
    v.brokers[broker_id{2}] = coord::broker_info{broker_id{2}, "127.0.0.2", 9093, "rack-b", {}, 2};
    v.topics["elsewhere"].partitions[partition_id{0}] = {
        {broker_id{2}}, coord::partition_state{broker_id{2}, leader_epoch{4}, {broker_id{2}}, 1, 0, written}};
  });
  p::fetch_request request;
  request.max_wait_ms = 10000;
  request.min_bytes = 1;
  auto& t = request.topics.emplace_back();
  t.topic = "elsewhere";
  t.partitions.emplace_back();
  const auto started = std::chrono::steady_clock::now();
  const auto response = run(handlers::handle_fetch, request, 12);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  const auto& answer = response.responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, p::code(p::error_code::not_leader_or_follower));
  EXPECT_EQ(answer.current_leader.leader_id, broker_id{2});
  EXPECT_EQ(answer.current_leader.leader_epoch, leader_epoch{4});
  ASSERT_EQ(response.node_endpoints.size(), 1u);
  EXPECT_EQ(response.node_endpoints[0].node_id, broker_id{2});
  EXPECT_EQ(response.node_endpoints[0].host, "127.0.0.2");
  EXPECT_EQ(response.node_endpoints[0].port, 9093);
  EXPECT_EQ(response.node_endpoints[0].rack, "rack-b");
}

// Fetch v13+ names topics by id. A known id is served from its topic. An unknown one, say of a deleted or
// recreated topic, is UNKNOWN_TOPIC_ID. Like an unknown name, it does not end the wait for the live ones.
TEST_F(handlers_test, fetch_by_topic_id_serves_known_ids_and_waits_past_unknown_ones) {
  topic("live", 1);
  auto batch = model::testing::build_simple_batch(2);
  ASSERT_TRUE(partitions_->leader_for({"live", partition_id{0}}).value()->append(batch));
  const auto live_id = handlers::to_wire(cluster_.view()->find_topic("live")->topic_id);
  const auto unknown_id = handlers::to_wire(coord::uuid::random());

  p::fetch_request request;
  request.max_wait_ms = 300;
  request.min_bytes = 1 << 20;  // more than there is: the fetch waits out max_wait_ms
  for (const auto& id : {live_id, unknown_id}) {
    auto& t = request.topics.emplace_back();
    t.topic_id = id;
    t.partitions.emplace_back().partition_max_bytes = 1 << 20;
  }
  auto started = std::chrono::steady_clock::now();
  auto response = run(handlers::handle_fetch, request, 17);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300));
  ASSERT_EQ(response.responses.size(), 2u);
  EXPECT_EQ(response.responses[0].topic_id, live_id);
  EXPECT_EQ(response.responses[0].partitions[0].error_code, 0);
  EXPECT_EQ(response.responses[0].partitions[0].high_watermark, offset{2});
  EXPECT_GT(response.responses[0].partitions[0].records->size(), 0u);
  EXPECT_EQ(response.responses[1].topic_id, unknown_id);
  EXPECT_EQ(response.responses[1].partitions[0].error_code, p::code(p::error_code::unknown_topic_id));
  EXPECT_EQ(response.responses[1].partitions[0].high_watermark, no_offset);

  // A name is not an id: v13+ ignores it, so a request that names "live" without its id finds nothing.
  request.topics.erase(request.topics.begin());
  request.topics[0].topic = "live";
  request.max_wait_ms = 10000;
  started = std::chrono::steady_clock::now();
  response = run(handlers::handle_fetch, request, 13);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(response.responses[0].partitions[0].error_code, p::code(p::error_code::unknown_topic_id));
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

// OffsetForLeaderEpoch: where each epoch ended in the leader's log, fenced on the current epoch like Fetch.
TEST_F(handlers_test, offset_for_leader_epoch_answers_where_each_epoch_ended) {
  topic("orders", 1);
  for (int i = 0; i < 2; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    auto request = produce("orders", batch);
    ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  }
  // A new election: this broker leads again in epoch 2, whose first offset is 6.
  cluster_.edit(
      [](coord::cluster_view& v) { v.topics["orders"].partitions[partition_id{0}].state->epoch = leader_epoch{2}; });
  partitions_->reconcile(*cluster_.view());
  auto batch = model::testing::build_simple_batch(3);
  auto request = produce("orders", batch);
  ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);

  const auto ask = [&](std::int32_t epoch, std::int32_t current, const std::string& topic = "orders") {
    p::offset_for_leader_epoch_request asked;
    asked.replica_id = broker_id{-1};
    auto& t = asked.topics.emplace_back();
    t.topic = topic;
    auto& part = t.partitions.emplace_back();
    part.partition = partition_id{0};
    part.current_leader_epoch = leader_epoch{current};
    part.leader_epoch = leader_epoch{epoch};
    auto response = run(handlers::handle_offset_for_leader_epoch, asked, std::int16_t{4});
    EXPECT_EQ(response.topics.size(), 1u);
    EXPECT_EQ(response.topics[0].topic, topic);
    EXPECT_EQ(response.topics[0].partitions[0].partition, partition_id{0});
    return response.topics[0].partitions[0];
  };
  const auto answer = [&](std::int32_t epoch, std::int32_t current = -1) {
    const auto got = ask(epoch, current);
    return std::tuple{got.error_code, got.leader_epoch.value(), got.end_offset.value()};
  };
  EXPECT_EQ(answer(0), std::tuple(0, 0, 6));
  EXPECT_EQ(answer(1), std::tuple(0, 0, 6));  // never led in epoch 1: epoch 0 is the one before, ending at 6
  EXPECT_EQ(answer(2, 2), std::tuple(0, 2, 9));
  EXPECT_EQ(answer(7), std::tuple(0, -1, -1));
  EXPECT_EQ(std::get<0>(answer(0, 1)), p::code(p::error_code::fenced_leader_epoch));
  EXPECT_EQ(std::get<0>(answer(0, 3)), p::code(p::error_code::unknown_leader_epoch));
  EXPECT_EQ(ask(0, -1, "missing").error_code, p::code(p::error_code::unknown_topic_or_partition));
}

// acks=all is acknowledged once the high watermark passes the batch: when the follower in the ISR has
// fetched past it, which its next fetch offset says.
TEST_F(handlers_test, acks_all_waits_until_every_replica_in_the_isr_has_the_batch) {
  replicated_topic("replicated");
  asio::io_context io;
  auto batch = model::testing::build_simple_batch(3);
  auto request = produce("replicated", batch, -1);
  request.timeout_ms = 60000;
  std::optional<p::produce_response> produced;
  start_produce(io, request, produced);
  EXPECT_FALSE(produced);

  // The follower reads past the high watermark, and is told the leader's high watermark.
  auto first = follower_fetch("replicated", 0);
  const auto read = run(handlers::handle_fetch, first, 12);
  const auto& answer = read.responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.high_watermark, offset{0});
  EXPECT_EQ(answer.records->size(), batch.size());
  io.poll();
  EXPECT_FALSE(produced);  // fetching from 0 says the follower has nothing yet

  auto next = follower_fetch("replicated", 3);
  EXPECT_EQ(run(handlers::handle_fetch, next, 12).responses[0].partitions[0].high_watermark, offset{3});
  io.run();
  ASSERT_TRUE(produced);
  EXPECT_EQ(produced->responses[0].partition_responses[0].error_code, 0);
  EXPECT_EQ(produced->responses[0].partition_responses[0].base_offset, offset{0});
  // Consumers see the batch now, and the follower's reads were not counted as the topic's bytes out.
  EXPECT_EQ(metrics_.for_topic("replicated").bytes_out->Value(), 0);
}

TEST_F(handlers_test, acks_all_answers_the_timeout_a_leader_change_or_a_shrunk_isr) {
  replicated_topic("replicated", {{"min.insync.replicas", "2"}});
  const auto outcome = [&](const std::function<void()>& meanwhile, std::int32_t timeout_ms = 60000) {
    asio::io_context io;
    auto batch = model::testing::build_simple_batch(3);
    auto request = produce("replicated", batch, -1);
    request.timeout_ms = timeout_ms;
    std::optional<p::produce_response> produced;
    start_produce(io, request, produced);
    EXPECT_FALSE(produced);
    meanwhile();
    io.run();
    return produced ? produced->responses[0].partition_responses[0].error_code : std::int16_t{-100};
  };
  EXPECT_EQ(outcome([] {}, 50), p::code(p::error_code::request_timed_out));
  // The ISR shrinks to the leader: the high watermark passes the batch, but fewer than min.insync.replicas
  // have it.
  EXPECT_EQ(outcome([&] {
              cluster_.edit([](coord::cluster_view& v) {
                v.topics["replicated"].partitions[partition_id{0}].state->isr = {broker_id{1}};
              });
              partitions_->reconcile(*cluster_.view());
            }),
            p::code(p::error_code::not_enough_replicas_after_append));
  // Leadership moves away while the produce waits.
  cluster_.edit([](coord::cluster_view& v) {
    v.topics["replicated"].partitions[partition_id{0}].state->isr = {broker_id{1}, broker_id{2}};
  });
  partitions_->reconcile(*cluster_.view());
  EXPECT_EQ(outcome([&] {
              cluster_.edit([](coord::cluster_view& v) {
                auto& state = *v.topics["replicated"].partitions[partition_id{0}].state;
                state.leader = broker_id{2};
                state.epoch = leader_epoch{1};
              });
              partitions_->reconcile(*cluster_.view());
            }),
            p::code(p::error_code::not_leader_or_follower));
}

// Fetch v12's last fetched epoch: a follower whose log diverged from the leader's is told where to truncate.
TEST_F(handlers_test, a_follower_whose_log_diverged_is_told_where_its_epoch_ended) {
  replicated_topic("replicated");
  const auto append = [&] {
    auto batch = model::testing::build_simple_batch(3);
    auto request = produce("replicated", batch);
    ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  };
  append();  // epoch 0: offsets 0-2
  cluster_.edit([](coord::cluster_view& v) {
    v.topics["replicated"].partitions[partition_id{0}].state->epoch = leader_epoch{2};
  });
  partitions_->reconcile(*cluster_.view());
  append();  // epoch 2: offsets 3-5
  const auto fetch = [&](std::int64_t from, std::int32_t last_epoch) {
    auto request = follower_fetch("replicated", from, last_epoch);
    return run(handlers::handle_fetch, request, 12).responses[0].partitions[0];
  };
  // The follower has offsets 3-4 from an epoch 1 this leader never had: truncate to where epoch 0 ended.
  const auto diverged = fetch(5, 1);
  EXPECT_EQ(diverged.error_code, 0);
  EXPECT_EQ(diverged.diverging_epoch.epoch, leader_epoch{0});
  EXPECT_EQ(diverged.diverging_epoch.end_offset, offset{3});
  EXPECT_EQ(diverged.records->size(), 0u);
  // Past the end of its last epoch in the leader's log: the same.
  EXPECT_EQ(fetch(4, 0).diverging_epoch.end_offset, offset{3});
  // At the end of epoch 0, or inside epoch 2: the logs agree, and the batches come.
  const auto agreed = fetch(3, 0);
  EXPECT_EQ(agreed.diverging_epoch.epoch, leader_epoch{-1});
  EXPECT_GT(agreed.records->size(), 0u);
  EXPECT_EQ(fetch(4, 2).diverging_epoch.epoch, leader_epoch{-1});
}

}  // namespace
}  // namespace ferry::server
