// Kafka's authorization checks and client quotas as the request handlers apply them, with the ACLs and quotas
// the test puts in place: see handlers_fixture.h.
#include <algorithm>
#include <chrono>

#include "model/testing/batch_builder.h"
#include "net/busy_time.h"
#include "quota/client_quotas.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

using authz::operation;
using authz::permission;
using authz::resource_type;

class authorized_handlers_test : public handlers_test {
 protected:
  void SetUp() override {
    handlers_test::SetUp();
    settings_.super_users = {"User:admin"};
    context_->authorizer = &settings_;
    connection_.principal = "User:alice";
  }

  void allow(resource_type type, std::string_view name, operation op, const std::string& principal = "User:alice") {
    bindings_.push_back(
        {{type, std::string(name), authz::pattern_type::literal}, {principal, "*", op, permission::allow}});
    const auto snapshot = std::make_shared<const authz::acl_snapshot>(bindings_);
    cluster_.edit([&](coord::cluster_view& v) { v.acls = snapshot; });
  }

  std::int64_t log_end(const std::string& topic) {
    return partitions_->leader_for({topic, partition_id{0}}).value()->log_end_offset().value();
  }

  authz::decision_settings settings_;
  std::vector<authz::acl_binding> bindings_;
};

TEST_F(authorized_handlers_test, a_produce_without_write_is_refused_and_appends_nothing) {
  topic("orders", 1);
  auto batch = model::testing::build_simple_batch(2);
  auto request = produce("orders", batch);
  EXPECT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code,
            p::code(p::error_code::topic_authorization_failed));
  EXPECT_EQ(log_end("orders"), 0);

  allow(resource_type::topic, "orders", operation::write);
  auto granted = produce("orders", batch);
  EXPECT_EQ(run(handlers::handle_produce, granted, 7).responses[0].partition_responses[0].error_code, 0);
  EXPECT_EQ(log_end("orders"), 2);
}

// CVE-2018-17196: transactional batches need Write on the request's transactional id, so none without one, even
// for a super user.
TEST_F(authorized_handlers_test, a_transactional_batch_without_a_transactional_id_is_refused_even_for_a_super_user) {
  topic("orders", 1);
  connection_.principal = "User:admin";
  auto batch = model::testing::build_batch({.records = {{.value = "v"}},
                                            .producer = producer_id{7},
                                            .epoch = producer_epoch{0},
                                            .base_sequence = 0,
                                            .transactional = true});
  auto request = produce("orders", batch);
  EXPECT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code,
            p::code(p::error_code::transactional_id_authorization_failed));
  EXPECT_EQ(log_end("orders"), 0);
}

// Metadata lists only the topics the principal may describe, and answers a named one it may not with
// TOPIC_AUTHORIZATION_FAILED whether it exists or not (so names cannot be probed).
TEST_F(authorized_handlers_test, metadata_hides_the_topics_the_principal_may_not_describe) {
  topic("visible", 1);
  topic("hidden", 1);
  allow(resource_type::topic, "visible", operation::read);  // Read implies Describe
  p::metadata_request all;
  const auto listed = run(handlers::handle_metadata, all, 12);
  ASSERT_EQ(listed.topics.size(), 1u);
  EXPECT_EQ(listed.topics[0].name, "visible");

  p::metadata_request named;
  named.topics.emplace();
  for (const auto* name : {"hidden", "missing"}) named.topics->emplace_back().name = name;
  const auto answered = run(handlers::handle_metadata, named, 12);
  ASSERT_EQ(answered.topics.size(), 2u);
  for (const auto& t : answered.topics)
    EXPECT_EQ(t.error_code, p::code(p::error_code::topic_authorization_failed)) << *t.name;
}

// CVE-2018-1288: a fetch that claims to come from a follower needs ClusterAction, or it reads nothing.
TEST_F(authorized_handlers_test, a_follower_fetch_needs_cluster_action) {
  replicated_topic("replicated");
  allow(resource_type::topic, "replicated", operation::write);
  auto batch = model::testing::build_simple_batch(2);
  auto request = produce("replicated", batch);
  ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  auto forged = follower_fetch("replicated", 0);
  const auto refused = run(handlers::handle_fetch, forged, 12);
  EXPECT_EQ(refused.responses[0].partitions[0].error_code, p::code(p::error_code::topic_authorization_failed));

  allow(resource_type::cluster, authz::cluster_name, operation::cluster_action);
  auto follower = follower_fetch("replicated", 0);
  EXPECT_EQ(run(handlers::handle_fetch, follower, 12).responses[0].partitions[0].error_code, 0);
}

// KIP-599 in CreateTopics: v6+ refuses a topic while the client is in debt, and tells it how long the debt lasts.
TEST_F(handlers_test, create_topics_v6_is_refused_while_the_mutation_budget_is_in_debt) {
  quota::client_quotas quotas;
  quotas.replace_table(std::make_shared<const quota::quota_table>(quota::quota_entries{
      {{std::nullopt, quota::entity_name::of("test")}, {{quota::quota_key::controller_mutation_rate, 1}}}}));
  context_->quotas = &quotas;
  const auto create = [&](const std::string& name, std::int32_t partitions, std::int16_t version) {
    p::create_topics_request request;
    request.timeout_ms = 1000;
    auto& t = request.topics.emplace_back();
    t.name = name;
    t.num_partitions = partitions;
    t.replication_factor = 1;
    return run(handlers::handle_create_topics, request, version).topics.at(0).error_code;
  };
  EXPECT_EQ(create("first", 20, 6), 0);  // 11 tokens: 9 in debt
  EXPECT_EQ(create("refused", 1, 6), p::code(p::error_code::throttling_quota_exceeded));
  EXPECT_EQ(cluster_.view()->find_topic("refused"), nullptr);
  EXPECT_EQ(create("older-version", 1, 5), 0);  // cannot say THROTTLING_QUOTA_EXCEEDED: made, and throttled
}

// KIP-124 in Fetch: what the connection used of its thread is charged to the request quota; a consumer over its
// request_percentage gets no data, while a follower's fetch is exempt and charged nothing.
TEST_F(handlers_test, a_consumer_over_its_request_percentage_gets_no_data_and_a_follower_is_not_charged) {
  topic("metered", 1);
  auto batch = model::testing::build_simple_batch(2);
  auto appended = produce("metered", batch);
  ASSERT_EQ(run(handlers::handle_produce, appended, 9).responses[0].partition_responses[0].error_code, 0);
  quota::client_quotas quotas;
  quotas.replace_table(std::make_shared<const quota::quota_table>(quota::quota_entries{
      {{std::nullopt, quota::entity_name::of("test")}, {{quota::quota_key::request_percentage, 0.01}}}}));
  context_->quotas = &quotas;
  net::busy_meter meter;
  connection_.busy_time = &meter;
  const auto busy_for = [&meter](std::chrono::milliseconds time) {
    const net::busy_meter::piece piece(meter);
    const auto until = std::chrono::steady_clock::now() + time;
    while (std::chrono::steady_clock::now() < until) {
    }
  };

  busy_for(std::chrono::milliseconds(5));
  auto follower = follower_fetch("metered", 0);
  EXPECT_FALSE(run(handlers::handle_fetch, follower, 12).responses.empty());
  EXPECT_TRUE(quotas.totals().empty());

  busy_for(std::chrono::milliseconds(5));  // 10 ms in all: 1 percent-second over 10 s is 0.1 % of a thread
  auto consumer = consumer_fetch("metered", 0);
  EXPECT_TRUE(run(handlers::handle_fetch, consumer, 12).responses.empty());
  const auto totals = quotas.totals();
  const auto request =
      std::find_if(totals.begin(), totals.end(), [](const auto& t) { return t.kind == quota::quota_kind::request; });
  ASSERT_NE(request, totals.end());
  EXPECT_GE(request->recorded, 10);
  EXPECT_EQ(request->throttled, 1U);
}

}  // namespace
}  // namespace ferry::server::testing
