// Request handlers of dynamic configs: broker settings through IncrementalAlterConfigs and DescribeConfigs, and the
// leader's replication throttle in Fetch: see handlers_fixture.h.
#include "model/testing/batch_builder.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

constexpr std::int8_t broker_resource = 4;
constexpr std::int8_t set = 0;
constexpr std::int8_t remove = 1;

p::incremental_alter_configs_request alter_broker(
    const std::string& name, const std::vector<std::tuple<std::string, std::int8_t, std::optional<std::string>>>& ops) {
  p::incremental_alter_configs_request request;
  auto& resource = request.resources.emplace_back();
  resource.resource_type = broker_resource;
  resource.resource_name = name;
  for (const auto& [config, op, value] : ops) {
    auto& c = resource.configs.emplace_back();
    c.name = config;
    c.config_operation = op;
    c.value = value;
  }
  return request;
}

// {name: (value, source)} of the dynamic settings DescribeConfigs gives for broker resource `name`.
std::map<std::string, std::pair<std::string, std::int8_t>> described(const p::describe_configs_response& response) {
  std::map<std::string, std::pair<std::string, std::int8_t>> out;
  for (const auto& c : response.results.at(0).configs)
    if (c.name.ends_with(".replication.throttled.rate")) out[c.name] = {c.value.value_or(""), c.config_source};
  return out;
}

p::describe_configs_request describe_broker(const std::string& name) {
  p::describe_configs_request request;
  auto& resource = request.resources.emplace_back();
  resource.resource_type = broker_resource;
  resource.resource_name = name;
  return request;
}

TEST_F(handlers_test, throttle_rates_are_set_for_one_broker_or_all_and_described_with_their_source) {
  constexpr std::int8_t dynamic_broker = 2;
  constexpr std::int8_t dynamic_default = 3;
  constexpr std::int8_t default_value = 5;
  const std::string unlimited = "9223372036854775807";
  auto own = alter_broker("1", {{"leader.replication.throttled.rate", set, "1000"}});
  EXPECT_EQ(run(handlers::handle_incremental_alter_configs, own, 1).responses.at(0).error_code, 0);
  auto every = alter_broker(
      "", {{"leader.replication.throttled.rate", set, "5000"}, {"follower.replication.throttled.rate", set, "6000"}});
  EXPECT_EQ(run(handlers::handle_incremental_alter_configs, every, 1).responses.at(0).error_code, 0);
  const auto view = cluster_.view();
  EXPECT_EQ(view->broker_configs.at("1").at("leader.replication.throttled.rate"), "1000");
  EXPECT_EQ(view->broker_configs.at("<default>").at("follower.replication.throttled.rate"), "6000");

  auto mine = describe_broker("1");
  EXPECT_EQ(described(run(handlers::handle_describe_configs, mine, 4)),
            (std::map<std::string, std::pair<std::string, std::int8_t>>{
                {"leader.replication.throttled.rate", {"1000", dynamic_broker}},
                {"follower.replication.throttled.rate", {"6000", dynamic_default}}}));

  // DELETE takes the own value away (the one for every broker shows through), and of a setting that is not set
  // it changes nothing and succeeds.
  auto cleared = alter_broker("1", {{"leader.replication.throttled.rate", remove, std::nullopt},
                                    {"replica.alter.log.dirs.io.max.bytes.per.second", remove, std::nullopt}});
  EXPECT_EQ(run(handlers::handle_incremental_alter_configs, cleared, 1).responses.at(0).error_code, 0);
  auto all_cleared = alter_broker("", {{"leader.replication.throttled.rate", remove, std::nullopt},
                                       {"follower.replication.throttled.rate", remove, std::nullopt}});
  EXPECT_EQ(run(handlers::handle_incremental_alter_configs, all_cleared, 1).responses.at(0).error_code, 0);
  EXPECT_EQ(described(run(handlers::handle_describe_configs, mine, 4)),
            (std::map<std::string, std::pair<std::string, std::int8_t>>{
                {"leader.replication.throttled.rate", {unlimited, default_value}},
                {"follower.replication.throttled.rate", {unlimited, default_value}}}));
}

TEST_F(handlers_test, broker_settings_that_cannot_change_at_run_time_are_refused_by_name) {
  const int writes_before = cluster_.writes;
  const auto refused = [&](p::incremental_alter_configs_request request) {
    return run(handlers::handle_incremental_alter_configs, request, 1).responses.at(0);
  };
  const auto static_setting = refused(alter_broker("1", {{"log.retention.ms", set, "1000"}}));
  EXPECT_EQ(static_setting.error_code, p::code(p::error_code::invalid_config));
  EXPECT_NE(static_setting.error_message->find("'log.retention.ms' cannot change while the broker runs"),
            std::string::npos);
  const auto bad_rate = refused(alter_broker("1", {{"leader.replication.throttled.rate", set, "-5"}}));
  EXPECT_EQ(bad_rate.error_code, p::code(p::error_code::invalid_config));
  const auto append = refused(alter_broker("1", {{"leader.replication.throttled.rate", 2, "5"}}));
  EXPECT_EQ(append.error_code, p::code(p::error_code::invalid_config));
  for (const auto* other : {"leader", "2", "01"}) {
    const auto elsewhere = refused(alter_broker(other, {{"leader.replication.throttled.rate", set, "5"}}));
    EXPECT_EQ(elsewhere.error_code, p::code(p::error_code::invalid_request)) << other;
    EXPECT_EQ(*elsewhere.error_message,
              "Unexpected broker id, expected 1 or empty string, but received " + std::string(other));
  }
  EXPECT_EQ(cluster_.writes, writes_before);
}

// The leader gives a throttled follower out of the ISR no records while leader.replication.throttled.rate is
// exceeded; a follower in the ISR is never held back.
TEST_F(handlers_test, a_throttled_follower_out_of_the_isr_gets_no_records_over_the_rate) {
  replicated_topic("moving", {{"leader.replication.throttled.replicas", "0:1"}});
  auto batch = model::testing::build_simple_batch(3);
  auto request = produce("moving", batch);
  ASSERT_EQ(run(handlers::handle_produce, request, 7).responses[0].partition_responses[0].error_code, 0);
  leader_quota_.set_limit(100);
  leader_quota_.record(10'000);  // well over 100 B/s

  // Broker 2 is in the ISR: served, and its bytes count against the rate all the same (as in Kafka).
  auto in_sync = follower_fetch("moving", 0);
  EXPECT_EQ(run(handlers::handle_fetch, in_sync, 12).responses[0].partitions[0].records->size(), batch.size());

  cluster_.edit([](coord::cluster_view& v) {
    auto& state = *v.topics.at("moving").partitions.at(partition_id{0}).state;
    state.isr = {broker_id{1}};
    ++state.zk_version;
  });
  partitions_->reconcile(*cluster_.view());
  auto throttled = follower_fetch("moving", 0);
  const auto answer = run(handlers::handle_fetch, throttled, 12).responses[0].partitions[0];
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.records->size(), 0U);
  EXPECT_EQ(metrics_.replication().leader_throttle().skips->Value(), 1);

  // Once the rate allows it again, the follower gets the batch.
  leader_quota_.set_limit(std::nullopt);
  auto admitted = follower_fetch("moving", 0);
  EXPECT_EQ(run(handlers::handle_fetch, admitted, 12).responses[0].partitions[0].records->size(), batch.size());
  EXPECT_EQ(metrics_.replication().leader_throttle().bytes->Value(), 10'000 + 2 * static_cast<double>(batch.size()));
}

}  // namespace
}  // namespace ferry::server::testing
