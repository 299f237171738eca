#include "config/broker_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <tuple>
#include <vector>

namespace ferry::config {
namespace {

const std::map<std::string, std::string> minimal{{"broker.id", "2"}, {"zookeeper.connect", "127.0.0.1:2181"}};

std::string error_of(const std::map<std::string, std::string>& settings) {
  try {
    (void)parse_broker_config(settings);
  } catch (const config_exception& e) {
    return e.what();
  }
  return "";
}

TEST(broker_config, defaults_follow_kafka) {
  const auto c = parse_broker_config(minimal);
  EXPECT_EQ(c.broker_id, 2);
  EXPECT_EQ(c.listeners.inter_broker_listener().bind.port, 9092);
  EXPECT_EQ(c.num_partitions, 1);
  EXPECT_TRUE(c.auto_create_topics_enable);
  EXPECT_EQ(c.topic_defaults.retention_ms, 604800000);
  EXPECT_EQ(c.topic_defaults.max_message_bytes, 1048588);
  EXPECT_EQ(c.socket_request_max_bytes, 104857600);
  EXPECT_EQ(c.socket_send_buffer_bytes, -1);  // Kafka's 102400 is accepted; see the header for why not default
}

// Kafka's shipped server.properties sets both socket buffer sizes (to 102400); -1 means the OS default.
TEST(broker_config, socket_buffer_sizes) {
  auto s = minimal;
  s["socket.send.buffer.bytes"] = "102400";
  s["socket.receive.buffer.bytes"] = "-1";
  const auto c = parse_broker_config(s);
  EXPECT_EQ(c.socket_send_buffer_bytes, 102400);
  EXPECT_EQ(c.socket_receive_buffer_bytes, -1);
  s["socket.receive.buffer.bytes"] = "0";
  EXPECT_NE(error_of(s).find("'socket.receive.buffer.bytes'"), std::string::npos);
  s["socket.receive.buffer.bytes"] = "-2";
  EXPECT_NE(error_of(s).find("'socket.receive.buffer.bytes'"), std::string::npos);
}

TEST(broker_config, listeners_and_advertised) {
  auto s = minimal;
  s["listeners"] = "PLAINTEXT://127.0.0.1:19092";
  auto c = parse_broker_config(s);
  EXPECT_EQ(c.listeners.inter_broker_listener().advertised->host, "127.0.0.1");
  EXPECT_EQ(c.listeners.inter_broker_listener().advertised->port, 19092);
  s["advertised.listeners"] = "PLAINTEXT://broker-0.example:9092";
  c = parse_broker_config(s);
  EXPECT_EQ(c.listeners.inter_broker_listener().advertised->host, "broker-0.example");
  EXPECT_EQ(c.listeners.inter_broker_listener().bind.port, 19092);
}

TEST(broker_config, retention_units_apply_finest_last) {
  auto s = minimal;
  s["log.retention.ms"] = "1000";
  s["log.retention.hours"] = "5";
  EXPECT_EQ(parse_broker_config(s).topic_defaults.retention_ms, 1000);
  s.erase("log.retention.ms");
  EXPECT_EQ(parse_broker_config(s).topic_defaults.retention_ms, 5 * 3600000);
}

TEST(broker_config, errors_name_the_setting) {
  auto s = minimal;
  s["num.partitons"] = "3";
  EXPECT_NE(error_of(s).find("num.partitons"), std::string::npos);
  s = minimal;
  s["num.partitions"] = "three";
  EXPECT_NE(error_of(s).find("'num.partitions'"), std::string::npos);
  s = minimal;
  s["listeners"] = "SSL://:9093";
  EXPECT_NE(error_of(s).find("ssl.keystore.location"), std::string::npos);
  s = minimal;
  s["log.retention.ms"] = "-7";
  EXPECT_NE(error_of(s).find("log.retention.ms"), std::string::npos);
  EXPECT_NE(error_of({{"broker.id", "1"}}).find("zookeeper.connect"), std::string::npos);
  s = minimal;
  s["log.format"] = "xml";
  EXPECT_NE(error_of(s).find("log.format"), std::string::npos);
  s["log.format"] = "json";
  EXPECT_EQ(parse_broker_config(s).log_format, "json");
}

TEST(broker_config, replica_fetch_settings_are_read_and_checked_against_each_other) {
  auto s = minimal;
  const auto defaults = parse_broker_config(s);
  EXPECT_EQ(defaults.replica_fetch_wait_max_ms, 500);
  EXPECT_EQ(defaults.replica_fetch_max_bytes, 1048576);
  s["replica.fetch.wait.max.ms"] = "200";
  s["replica.fetch.min.bytes"] = "4096";
  s["replica.fetch.max.bytes"] = "65536";
  s["replica.fetch.response.max.bytes"] = "262144";
  s["replica.fetch.backoff.ms"] = "50";
  s["replica.socket.timeout.ms"] = "1000";
  const auto c = parse_broker_config(s);
  EXPECT_EQ(c.replica_fetch_wait_max_ms, 200);
  EXPECT_EQ(c.replica_fetch_min_bytes, 4096);
  EXPECT_EQ(c.replica_fetch_max_bytes, 65536);
  EXPECT_EQ(c.replica_fetch_response_max_bytes, 262144);
  EXPECT_EQ(c.replica_fetch_backoff_ms, 50);
  EXPECT_EQ(c.replica_socket_timeout_ms, 1000);
  s["replica.socket.timeout.ms"] = "100";
  EXPECT_NE(error_of(s).find("'replica.socket.timeout.ms' (100) must be at least"), std::string::npos);
  s.erase("replica.socket.timeout.ms");
  s["replica.lag.time.max.ms"] = "200";
  EXPECT_NE(error_of(s).find("must be less than 'replica.lag.time.max.ms'"), std::string::npos);
}

TEST(broker_config, consumer_group_protocol_settings) {
  auto s = minimal;
  const auto defaults = parse_broker_config(s);
  EXPECT_TRUE(defaults.group_consumer_protocol);
  EXPECT_EQ(defaults.group_consumer_session_timeout_ms, 45000);
  EXPECT_EQ(defaults.group_consumer_assignors, (std::vector<std::string>{"uniform", "range"}));
  s["group.coordinator.rebalance.protocols"] = "classic";
  s["group.consumer.min.session.timeout.ms"] = "1000";
  s["group.consumer.session.timeout.ms"] = "6000";
  s["group.consumer.min.heartbeat.interval.ms"] = "500";
  s["group.consumer.heartbeat.interval.ms"] = "500";
  s["group.consumer.assignors"] = "org.apache.kafka.coordinator.group.assignor.RangeAssignor,uniform";
  s["group.consumer.migration.policy"] = "DISABLED";
  const auto c = parse_broker_config(s);
  EXPECT_FALSE(c.group_consumer_protocol);
  EXPECT_EQ(c.group_consumer_session_timeout_ms, 6000);
  EXPECT_EQ(c.group_consumer_heartbeat_interval_ms, 500);
  EXPECT_EQ(c.group_consumer_assignors, (std::vector<std::string>{"range", "uniform"}));
  // What Ferry does not do is refused by name, never accepted and ignored.
  for (const auto& [key, value, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"group.consumer.migration.policy", "bidirectional", "only 'disabled'"},
           {"group.consumer.assignors", "sticky", "'sticky' is not an assignor"},
           {"group.coordinator.rebalance.protocols", "classic,streams", "'streams' is not supported"},
           {"group.coordinator.rebalance.protocols", "consumer", "must include classic"},
           {"group.consumer.session.timeout.ms", "500", "must lie between"},
           {"group.consumer.heartbeat.interval.ms", "6000", "must be less than 'group.consumer.session.timeout.ms'"},
       }) {
    auto bad = s;
    bad[key] = value;
    if (key == "group.consumer.heartbeat.interval.ms") bad["group.consumer.max.heartbeat.interval.ms"] = "10000";
    const auto error = error_of(bad);
    EXPECT_NE(error.find(why), std::string::npos) << key << "=" << value << ": " << error;
    EXPECT_NE(error.find(key), std::string::npos) << error;
  }
}

TEST(broker_config, fetchers_per_leader_and_the_replica_selector) {
  auto s = minimal;
  const auto defaults = parse_broker_config(s);
  EXPECT_EQ(defaults.num_replica_fetchers, 1);
  EXPECT_FALSE(defaults.replica_selector_rack_aware);
  s["num.replica.fetchers"] = "4";
  s["replica.selector.class"] = "org.apache.kafka.common.replica.RackAwareReplicaSelector";
  const auto c = parse_broker_config(s);
  EXPECT_EQ(c.num_replica_fetchers, 4);
  EXPECT_TRUE(c.replica_selector_rack_aware);
  s["num.replica.fetchers"] = "0";
  EXPECT_NE(error_of(s).find("'num.replica.fetchers'"), std::string::npos);
  s.erase("num.replica.fetchers");
  s["replica.selector.class"] = "com.example.MySelector";
  EXPECT_NE(error_of(s).find("the one replica selector is org.apache.kafka.common.replica.RackAwareReplicaSelector"),
            std::string::npos);
}

TEST(broker_config, yaml_file_then_overrides) {
  const std::string path = ::testing::TempDir() + "/broker.yaml";
  std::ofstream(path) << "broker.id: 1\nzookeeper.connect: 127.0.0.1:2181\nnum.partitions: 4\nlog.dirs: /a,/b\n";
  const auto c = load_broker_config({.files = {path}, .overrides = {"num.partitions=6"}});
  EXPECT_EQ(c.num_partitions, 6);
  EXPECT_EQ(c.log_dirs, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_THROW(load_broker_config({.files = {path}, .overrides = {"novalue"}}), config_exception);
  EXPECT_THROW(load_broker_config({.files = {path + ".missing"}}), config_exception);
  std::ofstream(path) << "- not\n- a map\n";
  EXPECT_THROW(load_broker_config({.files = {path}}), config_exception);
}

TEST(broker_config, environment_names_map_to_settings) {
  EXPECT_EQ(setting_of_environment_name("FERRY_CONFIG_BROKER_ID"), "broker.id");
  EXPECT_EQ(setting_of_environment_name("FERRY_CONFIG_ADVERTISED_LISTENERS"), "advertised.listeners");
  EXPECT_EQ(setting_of_environment_name("FERRY_CONFIG_SOME__DASHED___UNDER"), "some-dashed_under");
  EXPECT_EQ(setting_of_environment_name("FERRY_BUILD_DIR"), "");
  EXPECT_EQ(setting_of_environment_name("PATH"), "");
}

// A StatefulSet's brokers share one file; a per-node file (written by an init container) and the pod's
// environment make each one distinct, and an --override still wins.
TEST(broker_config, files_then_environment_then_overrides) {
  const std::string shared = ::testing::TempDir() + "/shared.yaml";
  const std::string node = ::testing::TempDir() + "/node.yaml";
  std::ofstream(shared) << "broker.id: 0\nzookeeper.connect: zk:2181\nbroker.rack: unset\nnum.partitions: 4\n";
  std::ofstream(node) << "broker.rack: zone-b\n";
  const auto c = load_broker_config(
      {.files = {shared, node},
       .environment = {"PATH=/bin", "FERRY_BUILD_DIR=build/debug", "FERRY_CONFIG_BROKER_ID=3",
                       "FERRY_CONFIG_NUM_PARTITIONS=5", "FERRY_CONFIG_ADVERTISED_LISTENERS=PLAINTEXT://b-3.h:9092"},
       .overrides = {"num.partitions=6"}});
  EXPECT_EQ(c.broker_id, 3);
  EXPECT_EQ(c.rack, "zone-b");
  EXPECT_EQ(c.num_partitions, 6);
  EXPECT_EQ(c.listeners.inter_broker_listener().advertised->host, "b-3.h");
  try {
    (void)load_broker_config({.files = {shared}, .environment = {"FERRY_CONFIG_NO_SUCH_THING=1"}});
    ADD_FAILURE() << "an unknown setting from the environment was accepted";
  } catch (const config_exception& e) {
    EXPECT_NE(std::string(e.what()).find("no.such.thing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::config
