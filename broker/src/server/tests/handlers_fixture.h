// The fixture of the request handler tests: real partitions and logs (in a temporary directory) and a cluster
// given by the test through the handlers' small interfaces (broker_context.h), so each case sets up exactly
// the cluster it needs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "coord/errc.h"
#include "coord/reassignment.h"
#include "model/testing/memory_coordinator_log.h"
#include "server/broker_context.h"
#include "server/handlers/handlers.h"
#include "server/topic_propagation.h"
#include "server/txn_marker_sender.h"

namespace ferry::server::testing {
namespace asio = boost::asio;
namespace p = protocol;

// The zxid of every partition state the tests write: after the brokers registered (broker_info::epoch 1 and 2),
// so the leaders they name lead.
inline constexpr std::int64_t written = 10;

// The cluster as the test wants it: a view it edits, and the writes handlers make, recorded and applied to it.
// The handlers' tests run one broker and no network: what it has in its view has reached every broker.
class local_propagation final : public topic_propagation {
 public:
  asio::awaitable<bool> wait_until_served_everywhere(const std::string&, std::int32_t, std::int32_t,
                                                     std::chrono::milliseconds) override {
    co_return true;
  }
};

class test_cluster final : public cluster_metadata, public cluster_writes {
 public:
  test_cluster() {
    auto v = std::make_shared<coord::cluster_view>();
    v->brokers[broker_id{1}] = coord::broker_info{
        broker_id{1}, "127.0.0.1", 9092, std::nullopt, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092}}, 1};
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
  result<void> set_broker_config(std::string_view entity, const coord::layout::config_map& config) override {
    ++writes;
    edit([&](coord::cluster_view& v) { v.broker_configs[std::string(entity)] = config; });
    return success();
  }
  result<coord::layout::config_map> read_broker_config(std::string_view entity) override {
    const auto view = this->view();
    const auto it = view->broker_configs.find(entity);
    return it == view->broker_configs.end() ? coord::layout::config_map{} : it->second;
  }
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
    background_thread_ = std::thread([this] { background_.run(); });
    peers_ = std::make_shared<peer_requests>(background_, "test", std::chrono::seconds(5));
    markers_ = std::make_unique<marker_appender>(*partitions_, background_, pool_, 5000);
    markers_->on_offsets_marker([this](std::int32_t partition, producer_id producer, model::marker_type type) {
      groups_.complete_txn(partition, producer, type == model::marker_type::commit);
    });
    marker_sender_ = std::make_shared<txn_marker_sender>(
        background_, broker_id{1}, [this] { return cluster_.view(); }, *markers_, peers_);
    transactions_ = std::make_unique<txn::txn_coordinator>(txn::coordinator_config{.log_partitions = 1}, txn_log_,
                                                           *ids_, *marker_sender_);
    ASSERT_EQ(transactions_->lead({{0, leader_epoch{0}}}), std::vector<std::int32_t>{0});
    ASSERT_TRUE(transactions_->load(0, clock_.now_ms()));
    context_ = std::make_unique<broker_context>(broker_context{config_, cluster_, cluster_, *partitions_, metrics_,
                                                               *ids_, pool_, pool_, clock_, leader_quota_, groups_,
                                                               *transactions_, *markers_, *peers_, propagation_});
  }
  void TearDown() override {
    background_work_.reset();
    background_thread_.join();
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
    connection_.executor = loop.get_executor();
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
      v.brokers[broker_id{2}] = coord::broker_info{
          broker_id{2}, "127.0.0.2", 9093, std::nullopt, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.2", 9093}}, 2};
      auto& topic = v.topics[name];
      topic.config = std::move(config);
      topic.partitions[partition_id{0}] = {
          {broker_id{1}, broker_id{2}},
          coord::partition_state{broker_id{1}, leader_epoch{0}, {broker_id{1}, broker_id{2}}, 1, 0, written}};
    });
    partitions_->reconcile(*cluster_.view());
  }

  // A consumer's fetch of partition 0 from `from`, naming `rack` (Fetch v11+) and its isolation level (0
  // read_uncommitted, 1 read_committed).
  static p::fetch_request consumer_fetch(const std::string& topic, std::int64_t from, const std::string& rack = "",
                                         std::int8_t isolation = 0) {
    p::fetch_request request;
    request.max_wait_ms = 0;
    request.min_bytes = 1;
    request.max_bytes = 1 << 20;
    request.rack_id = rack;
    request.isolation_level = isolation;
    auto& t = request.topics.emplace_back();
    t.topic = topic;
    auto& part = t.partitions.emplace_back();
    part.partition = partition_id{0};
    part.fetch_offset = offset{from};
    part.partition_max_bytes = 1 << 20;
    return request;
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
  replication::replication_quota leader_quota_{clock_, metrics_.replication().leader_throttle()};
  asio::thread_pool pool_{1};
  model::testing::memory_coordinator_log offsets_log_;
  group::group_coordinator groups_{group::coordinator_config{}, offsets_log_};
  std::filesystem::path dir_;
  std::unique_ptr<storage::log_manager> logs_;
  std::unique_ptr<replication::partition_manager> partitions_;
  std::unique_ptr<producer_ids> ids_;
  // The markers' replication waits and requests to other brokers run on a thread of their own.
  asio::io_context background_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> background_work_{
      background_.get_executor()};
  std::thread background_thread_;
  std::shared_ptr<peer_requests> peers_;
  local_propagation propagation_;
  std::unique_ptr<marker_appender> markers_;
  std::shared_ptr<txn_marker_sender> marker_sender_;
  model::testing::memory_coordinator_log txn_log_;
  std::unique_ptr<txn::txn_coordinator> transactions_;
  std::unique_ptr<broker_context> context_;
  net::connection_info connection_{1, "127.0.0.1:1"};
};

}  // namespace ferry::server::testing
