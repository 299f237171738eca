// DeleteRecords (API 21): the log start moves to the offset given, reads below it are out of range, and the answer
// waits until the in-sync followers' logs start there too (the low watermark).
#include "model/testing/batch_builder.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

p::delete_records_request delete_request(const std::string& topic, std::int64_t at, std::int32_t timeout_ms) {
  p::delete_records_request request;
  request.timeout_ms = timeout_ms;
  auto& t = request.topics.emplace_back();
  t.name = topic;
  auto& part = t.partitions.emplace_back();
  part.partition_index = partition_id{0};
  part.offset = offset{at};
  return request;
}

TEST_F(handlers_test, delete_records_moves_the_log_start_and_reads_below_it_are_out_of_range) {
  topic("purged", 1);
  for (int i = 0; i < 10; ++i) {
    auto batch = model::testing::build_simple_batch(3);
    auto request = produce("purged", batch);
    ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  }
  auto past = delete_request("purged", 31, 1000);
  EXPECT_EQ(run(handlers::handle_delete_records, past, 2).topics[0].partitions[0].error_code,
            p::code(p::error_code::offset_out_of_range));
  auto request = delete_request("purged", 10, 1000);
  const auto answer = run(handlers::handle_delete_records, request, 2).topics[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.low_watermark, offset{10});
  auto p = partitions_->leader_for({"purged", partition_id{0}}).value();
  EXPECT_EQ(p->log_start_offset(), offset{10});
  auto below = consumer_fetch("purged", 5);
  EXPECT_EQ(run(handlers::handle_fetch, below, 11).responses[0].partitions[0].error_code,
            p::code(p::error_code::offset_out_of_range));
  auto at = consumer_fetch("purged", 10);
  EXPECT_EQ(run(handlers::handle_fetch, at, 11).responses[0].partitions[0].error_code, 0);
  // -1: up to the high watermark; never back.
  auto all = delete_request("purged", -1, 1000);
  EXPECT_EQ(run(handlers::handle_delete_records, all, 2).topics[0].partitions[0].low_watermark, offset{30});
  auto back = delete_request("purged", 3, 1000);
  EXPECT_EQ(run(handlers::handle_delete_records, back, 2).topics[0].partitions[0].low_watermark, offset{30});
}

TEST_F(handlers_test, delete_records_waits_for_the_in_sync_followers_log_starts) {
  replicated_topic("purged");
  auto batch = model::testing::build_simple_batch(9);
  auto produced = produce("purged", batch);
  ASSERT_EQ(run(handlers::handle_produce, produced, 7).responses[0].partition_responses[0].error_code, 0);
  const auto follower_at = [&](std::int64_t log_start) {
    auto fetch = follower_fetch("purged", 9, 0);
    fetch.topics[0].partitions[0].log_start_offset = offset{log_start};
    ASSERT_EQ(run(handlers::handle_fetch, fetch, 12).responses[0].partitions[0].error_code, 0);
  };
  follower_at(0);
  auto request = delete_request("purged", 6, 100);
  EXPECT_EQ(run(handlers::handle_delete_records, request, 2).topics[0].partitions[0].error_code,
            p::code(p::error_code::request_timed_out))
      << "the follower's log still starts at 0";
  follower_at(6);  // it followed the leader's log start
  const auto answer = run(handlers::handle_delete_records, request, 2).topics[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.low_watermark, offset{6});
}

}  // namespace
}  // namespace ferry::server::testing
