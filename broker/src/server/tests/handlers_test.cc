// Request handlers on the data path (produce, fetch, offsets, producer ids): see handlers_fixture.h.
#include <boost/asio/steady_timer.hpp>

#include "model/records.h"
#include "model/testing/batch_builder.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

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
  const auto read = p->read(offset{0}, 1 << 20, replication::partition::isolation::read_uncommitted).value();
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
    v.brokers[broker_id{2}] = coord::broker_info{
        broker_id{2}, "127.0.0.2", 9093, "rack-b", {{"PLAINTEXT", "PLAINTEXT", "127.0.0.2", 9093}}, 2};
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

// Clients get each broker's address on the listener they connected to (listeners, advertised.listeners): a broker
// without that listener is left out of Metadata, and a partition it leads is LISTENER_NOT_FOUND from v6 on.
TEST_F(handlers_test, metadata_answers_with_addresses_on_the_clients_listener) {
  cluster_.edit([](coord::cluster_view& v) {
    v.brokers[broker_id{1}].endpoints.push_back({"EXTERNAL", "PLAINTEXT", "203.0.113.1", 31090});
    v.brokers[broker_id{2}] = coord::broker_info{
        broker_id{2}, "127.0.0.2", 9093, std::nullopt, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.2", 9093}}, 2};
    v.topics["elsewhere"].partitions[partition_id{0}] = {
        {broker_id{2}}, coord::partition_state{broker_id{2}, leader_epoch{4}, {broker_id{2}}, 1, 0, written}};
  });
  const auto partition_of = [](const p::metadata_response& r) {
    for (const auto& t : r.topics)
      if (t.name == "elsewhere") return t.partitions.at(0);
    throw std::runtime_error("no topic elsewhere");
  };
  p::metadata_request request;
  connection_.listener = "EXTERNAL";
  auto response = run(handlers::handle_metadata, request, 12);
  ASSERT_EQ(response.brokers.size(), 1u);
  EXPECT_EQ(response.brokers[0].node_id, broker_id{1});
  EXPECT_EQ(response.brokers[0].host, "203.0.113.1");
  EXPECT_EQ(response.brokers[0].port, 31090);
  EXPECT_EQ(partition_of(response).error_code, p::code(p::error_code::listener_not_found));
  EXPECT_EQ(partition_of(response).leader_id, no_broker);
  EXPECT_EQ(partition_of(run(handlers::handle_metadata, request, 5)).error_code,
            p::code(p::error_code::leader_not_available));

  connection_.listener = "PLAINTEXT";
  response = run(handlers::handle_metadata, request, 12);
  ASSERT_EQ(response.brokers.size(), 2u);
  EXPECT_EQ(response.brokers[0].host, "127.0.0.1");
  EXPECT_EQ(partition_of(response).error_code, 0);
  EXPECT_EQ(partition_of(response).leader_id, broker_id{2});
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
  auto& waiting = metrics_.replication().produce_requests_waiting_for_replicas();
  EXPECT_EQ(waiting.Value(), 1);

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
  EXPECT_EQ(waiting.Value(), 0);
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

// Review finding 1: a follower whose fetch offset is below the leader's log start (retention removed what it
// needs) is told the log start, so it can start over there; before, the answer carried -1 and the follower
// asked again forever.
TEST_F(handlers_test, a_follower_below_the_log_start_is_told_where_the_log_starts) {
  replicated_topic("retained", {{"segment.bytes", "200"}, {"retention.bytes", "200"}});
  for (int i = 0; i < 20; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    auto request = produce("retained", batch);
    ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  }
  auto p = partitions_->leader_for({"retained", partition_id{0}}).value();
  const auto end = p->log_end_offset().value();
  auto caught_up = follower_fetch("retained", end, 0);
  ASSERT_EQ(run(handlers::handle_fetch, caught_up, 12).responses[0].partitions[0].error_code, 0);
  ASSERT_EQ(p->high_watermark().value(), end);
  ASSERT_TRUE(p->apply_retention());
  const auto start = p->log_start_offset().value();
  ASSERT_GT(start, 3);
  auto behind = follower_fetch("retained", 3, 0);
  const auto answer = run(handlers::handle_fetch, behind, 12).responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, p::code(p::error_code::offset_out_of_range));
  EXPECT_EQ(answer.log_start_offset.value(), start);
  EXPECT_EQ(answer.high_watermark.value(), end);
}

// Review finding 8: max.message.bytes is the batch as stored (compressed), as in Kafka; a 5 MB record that
// compresses far below a 1 MB limit is taken.
TEST_F(handlers_test, max_message_bytes_applies_to_the_compressed_batch) {
  topic("limited", 1, {{"max.message.bytes", "1048576"}});
  const std::string large(5 << 20, 'x');
  model::testing::batch_spec spec;
  spec.records.push_back({"k", large, {}, 0});
  spec.codec = model::compression::zstd;
  auto compressed = model::testing::build_batch(spec);
  ASSERT_LT(compressed.size(), 1u << 20);
  auto request = produce("limited", compressed);
  EXPECT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  // A batch over the limit as stored is still refused.
  spec.codec = model::compression::none;
  auto plain = model::testing::build_batch(spec);
  auto refused = produce("limited", plain);
  EXPECT_EQ(run(handlers::handle_produce, refused, 7).responses[0].partition_responses[0].error_code,
            p::code(p::error_code::message_too_large));
}

}  // namespace
}  // namespace ferry::server::testing
