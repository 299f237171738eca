#include "coord/layout.h"

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "coord/errc.h"
#include "coord/uuid.h"

namespace ferry::coord {
namespace {

using nlohmann::json;

std::set<std::string> keys_of(const std::string& text) {
  std::set<std::string> keys;
  const json parsed = json::parse(text);
  for (const auto& [key, value] : parsed.items()) keys.insert(key);
  return keys;
}

TEST(Uuid, EncodesLikeKafka) {
  uuid id;
  for (std::uint8_t i = 0; i < 16; ++i) id.bytes[i] = i;
  // Base64 (url-safe, unpadded) of 00 01 .. 0f, as java.util.Base64.getUrlEncoder().withoutPadding() writes it.
  EXPECT_EQ(id.to_string(), "AAECAwQFBgcICQoLDA0ODw");
  EXPECT_EQ(uuid{}.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
  uuid high;
  high.bytes.fill(0xff);
  EXPECT_EQ(high.to_string(), "_____________________w");
}

TEST(Uuid, ParsesWhatItWrites) {
  for (int i = 0; i < 100; ++i) {
    const uuid id = uuid::random();
    const std::string text = id.to_string();
    ASSERT_EQ(text.size(), 22u);
    EXPECT_NE(text.front(), '-');
    EXPECT_FALSE(id.is_zero());
    EXPECT_EQ(id.bytes[6] >> 4, 4);  // version 4
    auto parsed = uuid::parse(text);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed.value(), id);
  }
}

TEST(Uuid, RejectsMalformedText) {
  for (const char* bad : {"", "AAECAwQFBgcICQoLDA0OD", "AAECAwQFBgcICQoLDA0ODw=", "AAECAwQFBgcICQoLDA0OD+",
                          "AAECAwQFBgcICQoLDA0ODx" /* non-zero trailing bits */}) {
    auto parsed = uuid::parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error(), errc::invalid_data);
  }
}

TEST(Layout, Paths) {
  EXPECT_EQ(layout::broker_path(broker_id{3}), "/brokers/ids/3");
  EXPECT_EQ(layout::topic_path("orders"), "/brokers/topics/orders");
  EXPECT_EQ(layout::partition_state_path("orders", partition_id{7}), "/brokers/topics/orders/partitions/7/state");
  EXPECT_EQ(layout::topic_config_path("orders"), "/config/topics/orders");
  EXPECT_EQ(layout::delete_topic_path("orders"), "/admin/delete_topics/orders");
  EXPECT_EQ(layout::deletion_acknowledgement_path("orders", broker_id{3}), "/admin/delete_topics/orders/3");
  EXPECT_EQ(layout::config_change_sequence("config_change_0000000042"), 42);
  EXPECT_EQ(layout::config_change_sequence("config_change_"), std::nullopt);
  EXPECT_EQ(layout::config_change_sequence("other_0000000042"), std::nullopt);
}

TEST(Layout, TopicNames) {
  EXPECT_TRUE(layout::is_valid_topic_name("orders.v2_eu-1"));
  EXPECT_TRUE(layout::is_valid_topic_name(std::string(249, 'a')));
  EXPECT_FALSE(layout::is_valid_topic_name(std::string(250, 'a')));
  for (const char* bad : {"", ".", "..", "a/b", "a b", "ünï"}) EXPECT_FALSE(layout::is_valid_topic_name(bad)) << bad;
}

TEST(Layout, BrokerRegistrationHasKafkaShape) {
  layout::broker_registration b;
  b.host = "h1";
  b.port = 9092;
  b.rack = "dc1";
  b.endpoints = {{"PLAINTEXT", "PLAINTEXT", "h1", 9092}};
  b.timestamp_ms = 1614570663881;
  const std::string text = layout::encode_broker(b);
  EXPECT_EQ(text, R"({"version":5,"host":"h1","port":9092,"jmx_port":-1,"timestamp":"1614570663881",)"
                  R"("endpoints":["PLAINTEXT://h1:9092"],"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},)"
                  R"("rack":"dc1","features":{}})");
  auto decoded = layout::decode_broker(text);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), b);

  b.rack.reset();
  EXPECT_EQ(keys_of(layout::encode_broker(b)),
            (std::set<std::string>{"version", "host", "port", "jmx_port", "timestamp", "endpoints",
                                   "listener_security_protocol_map", "features"}));
}

TEST(Layout, DecodesRegistrationsWrittenByKafka) {
  // Version 5 with two listeners, from Kafka's documentation.
  auto v5 = layout::decode_broker(
      R"({"version":5,"host":"h1","port":9092,"jmx_port":-1,"timestamp":"1614570663881",)"
      R"("endpoints":["CLIENT://h1:9092","INTERNAL://[::1]:9093"],)"
      R"("listener_security_protocol_map":{"CLIENT":"PLAINTEXT","INTERNAL":"SSL"},"rack":"dc1","features":{}})");
  ASSERT_TRUE(v5);
  ASSERT_EQ(v5.value().endpoints.size(), 2u);
  EXPECT_EQ(v5.value().endpoints[0], (layout::endpoint{"CLIENT", "PLAINTEXT", "h1", 9092}));
  EXPECT_EQ(v5.value().endpoints[1], (layout::endpoint{"INTERNAL", "SSL", "::1", 9093}));
  EXPECT_EQ(layout::encode_endpoint(v5.value().endpoints[1]), "INTERNAL://[::1]:9093");

  // No plaintext listener: host is null and port -1; nothing to take them from.
  auto ssl_only = layout::decode_broker(
      R"({"version":4,"host":null,"port":-1,"jmx_port":-1,"timestamp":"1","endpoints":["SSL://h2:9093"],)"
      R"("listener_security_protocol_map":{"SSL":"SSL"}})");
  ASSERT_TRUE(ssl_only);
  EXPECT_EQ(ssl_only.value().host, "");
  EXPECT_EQ(ssl_only.value().port, -1);
  EXPECT_FALSE(ssl_only.value().rack);

  // Version 1: host and port only.
  auto v1 = layout::decode_broker(R"({"version":1,"host":"h3","port":9092,"jmx_port":-1,"timestamp":"2"})");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1.value().endpoints, (std::vector<layout::endpoint>{{"PLAINTEXT", "PLAINTEXT", "h3", 9092}}));
}

TEST(Layout, TopicAssignmentHasKafkaShape) {
  layout::topic_assignment t;
  t.partitions = {{partition_id{0}, {broker_id{1}, broker_id{2}, broker_id{3}}},
                  {partition_id{1}, {broker_id{2}, broker_id{3}, broker_id{1}}}};
  t.topic_id = uuid::parse("AAECAwQFBgcICQoLDA0ODw").value();
  const std::string text = layout::encode_topic(t);
  EXPECT_EQ(text, R"({"version":3,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},)"
                  R"("removing_replicas":{},"topic_id":"AAECAwQFBgcICQoLDA0ODw"})");
  auto decoded = layout::decode_topic(text);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), t);

  // Versions 1 and 2 carry no topic id.
  auto v1 = layout::decode_topic(R"({"version":1,"partitions":{"0":[1]}})");
  ASSERT_TRUE(v1);
  EXPECT_TRUE(v1.value().topic_id.is_zero());
  EXPECT_EQ(keys_of(layout::encode_topic(v1.value())),
            (std::set<std::string>{"version", "partitions", "adding_replicas", "removing_replicas"}));

  // Partition keys are strings; ten sorts after nine.
  layout::topic_assignment many;
  for (int p = 0; p < 11; ++p) many.partitions[partition_id{p}] = {broker_id{p}};
  auto round_trip = layout::decode_topic(layout::encode_topic(many));
  ASSERT_TRUE(round_trip);
  EXPECT_EQ(round_trip.value(), many);
}

TEST(Layout, AReassignmentInProgressListsAddingAndRemovingReplicas) {
  // Partition 0 moves from [1,2,3] to [2,3,4]: the replicas are the target, then the originals left.
  layout::topic_assignment t;
  t.partitions = {{partition_id{0}, {broker_id{2}, broker_id{3}, broker_id{4}, broker_id{1}}},
                  {partition_id{1}, {broker_id{2}, broker_id{3}, broker_id{1}}}};
  t.adding = {{partition_id{0}, {broker_id{4}}}};
  t.removing = {{partition_id{0}, {broker_id{1}}}};
  const std::string text = layout::encode_topic(t);
  EXPECT_EQ(text, R"({"version":3,"partitions":{"0":[2,3,4,1],"1":[2,3,1]},"adding_replicas":{"0":[4]},)"
                  R"("removing_replicas":{"0":[1]}})");
  auto decoded = layout::decode_topic(text);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), t);

  // Kafka writes empty lists for partitions that are not moving; they are no reassignment.
  auto empty_lists = layout::decode_topic(
      R"({"version":2,"partitions":{"0":[1]},"adding_replicas":{"0":[]},"removing_replicas":{"0":[]}})");
  ASSERT_TRUE(empty_lists);
  EXPECT_TRUE(empty_lists.value().adding.empty());
  EXPECT_TRUE(empty_lists.value().removing.empty());
  EXPECT_EQ(layout::decode_topic(R"({"version":3,"partitions":{"0":[1]},"adding_replicas":[1]})").error(),
            errc::invalid_data);
}

TEST(Layout, PartitionStateHasKafkaShape) {
  const layout::leader_and_isr s{broker_id{1}, leader_epoch{8}, {broker_id{1}, broker_id{2}, broker_id{3}}, 33};
  const std::string text = layout::encode_partition_state(s);
  EXPECT_EQ(text, R"({"version":1,"leader":1,"leader_epoch":8,"isr":[1,2,3],"controller_epoch":33})");
  EXPECT_EQ(layout::decode_partition_state(text).value(), s);

  // Kafka 3.2+ adds leader_recovery_state while a leader recovers; it is ignored.
  auto recovering = layout::decode_partition_state(
      R"({"version":1,"leader":-1,"leader_epoch":9,"isr":[3],"controller_epoch":34,"leader_recovery_state":1})");
  ASSERT_TRUE(recovering);
  EXPECT_EQ(recovering.value().leader, no_broker);
}

TEST(Layout, PartitionStateChangesCarryTheStatesWritten) {
  const auto id = uuid::parse("pYd1RkH7QyGD6HDXNNrTnA").value();
  const std::vector<layout::partition_state_change> changes = {
      {"orders", id, partition_id{0}, 3, {broker_id{1}, leader_epoch{2}, {broker_id{1}, broker_id{2}}, 7}},
      {"orders", id, partition_id{5}, 0, {no_broker, leader_epoch{1}, {broker_id{3}}, 7}}};
  const std::string text = layout::encode_partition_state_changes(changes);
  EXPECT_EQ(text,
            R"({"version":1,"partitions":[{"topic":"orders","topic_id":"pYd1RkH7QyGD6HDXNNrTnA","partition":0,)"
            R"("state_version":3,"leader":1,"leader_epoch":2,"isr":[1,2],"controller_epoch":7},)"
            R"({"topic":"orders","topic_id":"pYd1RkH7QyGD6HDXNNrTnA","partition":5,"state_version":0,"leader":-1,)"
            R"("leader_epoch":1,"isr":[3],"controller_epoch":7}]})");
  EXPECT_EQ(layout::decode_partition_state_changes(text).value(), changes);
  EXPECT_EQ(layout::partition_state_change_sequence("state_change_0000000042"), 42);
  EXPECT_EQ(layout::partition_state_change_sequence("config_change_0000000042"), std::nullopt);
  for (const char* bad : {R"({"version":1})", R"({"version":1,"partitions":{}})",
                          R"({"version":1,"partitions":[{"topic":"t","partition":0}]})",
                          R"({"version":1,"partitions":[{"topic":"t","topic_id":"x","partition":0,"state_version":1,)"
                          R"("leader":1,"leader_epoch":0,"isr":[1],"controller_epoch":1}]})"}) {
    EXPECT_EQ(layout::decode_partition_state_changes(bad).error(), errc::invalid_data) << bad;
  }
}

TEST(Layout, ConfigNodesHaveKafkaShape) {
  const layout::config_map config{{"retention.ms", "86400000"}, {"cleanup.policy", "compact"}};
  const std::string text = layout::encode_entity_config(config);
  EXPECT_EQ(text, R"({"version":1,"config":{"cleanup.policy":"compact","retention.ms":"86400000"}})");
  EXPECT_EQ(layout::decode_entity_config(text).value(), config);
  EXPECT_EQ(layout::decode_entity_config(R"({"version":1,"config":{}})").value(), layout::config_map{});

  const layout::config_change change{"topics", "orders"};
  EXPECT_EQ(layout::encode_config_change(change), R"({"version":2,"entity_path":"topics/orders"})");
  EXPECT_EQ(layout::decode_config_change(layout::encode_config_change(change)).value(), change);
  EXPECT_EQ(layout::decode_config_change(R"({"version":1,"entity_type":"topics","entity_name":"orders"})").value(),
            change);
}

TEST(Layout, ControllerNodesHaveKafkaShape) {
  const layout::controller_registration c{broker_id{1}, 1700000000000};
  const std::string text = layout::encode_controller(c);
  EXPECT_EQ(text, R"({"version":2,"brokerid":1,"timestamp":"1700000000000","kraftControllerEpoch":-1})");
  EXPECT_EQ(layout::decode_controller(text).value(), c);
  // Kafka 2.x wrote version 1.
  EXPECT_EQ(layout::decode_controller(R"({"version":1,"brokerid":4,"timestamp":"5"})").value().id, broker_id{4});

  EXPECT_EQ(layout::encode_controller_epoch(33), "33");
  EXPECT_EQ(layout::decode_controller_epoch("33").value(), 33);
  for (const char* bad : {"", "x", "33 ", "{\"epoch\":1}", "99999999999"}) {
    EXPECT_EQ(layout::decode_controller_epoch(bad).error(), errc::invalid_data) << bad;
  }
}

TEST(Layout, ClusterIdAndProducerIdBlockHaveKafkaShape) {
  EXPECT_EQ(layout::encode_cluster_id("AAECAwQFBgcICQoLDA0ODw"), R"({"version":"1","id":"AAECAwQFBgcICQoLDA0ODw"})");
  EXPECT_EQ(layout::decode_cluster_id(R"({"version":"1","id":"AAECAwQFBgcICQoLDA0ODw"})").value(),
            "AAECAwQFBgcICQoLDA0ODw");

  const layout::producer_id_block b{broker_id{2}, 1000, 1999};
  const std::string text = layout::encode_producer_id_block(b);
  EXPECT_EQ(text, R"({"version":1,"broker":2,"block_start":"1000","block_end":"1999"})");
  EXPECT_EQ(layout::decode_producer_id_block(text).value(), b);
}

TEST(Layout, MalformedJsonIsInvalidData) {
  const std::vector<std::string> not_objects = {"", "{", "[]", "null", "42", "\"x\"", "{\"version\":1,}", "\xff\xfe"};
  for (const auto& text : not_objects) {
    EXPECT_EQ(layout::decode_broker(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_topic(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_partition_state(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_entity_config(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_config_change(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_controller(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_cluster_id(text).error(), errc::invalid_data) << text;
    EXPECT_EQ(layout::decode_producer_id_block(text).error(), errc::invalid_data) << text;
  }
  // Right syntax, wrong shape.
  const std::vector<std::string> bad_states = {
      R"({"version":1,"leader":"1","leader_epoch":0,"isr":[1],"controller_epoch":1})",
      R"({"version":1,"leader":1,"leader_epoch":0,"isr":1,"controller_epoch":1})",
      R"({"version":1,"leader":1,"leader_epoch":0,"isr":[1.5],"controller_epoch":1})",
      R"({"version":1,"leader":3000000000,"leader_epoch":0,"isr":[1],"controller_epoch":1})",
      R"({"version":1,"leader_epoch":0,"isr":[1],"controller_epoch":1})",
      R"({"leader":1,"leader_epoch":0,"isr":[1],"controller_epoch":1})"};
  for (const auto& text : bad_states)
    EXPECT_EQ(layout::decode_partition_state(text).error(), errc::invalid_data) << text;

  const std::vector<std::string> bad_topics = {R"({"version":3,"partitions":[[1]]})",
                                               R"({"version":3,"partitions":{"x":[1]}})",
                                               R"({"version":3,"partitions":{"-1":[1]}})",
                                               R"({"version":3,"partitions":{"0":[1]},"topic_id":"short"})",
                                               R"({"version":3,"partitions":{"0":[1]},"topic_id":7})",
                                               R"({"version":3})"};
  for (const auto& text : bad_topics) EXPECT_EQ(layout::decode_topic(text).error(), errc::invalid_data) << text;

  EXPECT_EQ(layout::decode_entity_config(R"({"version":1,"config":{"retention.ms":86400000}})").error(),
            errc::invalid_data);
  EXPECT_EQ(layout::decode_config_change(R"({"version":2,"entity_path":"topics"})").error(), errc::invalid_data);
  EXPECT_EQ(layout::decode_broker(R"({"version":5,"host":"h","port":1,"endpoints":["nonsense"]})").error(),
            errc::invalid_data);
  EXPECT_EQ(layout::decode_producer_id_block(R"({"version":1,"broker":1,"block_start":"x","block_end":"9"})").error(),
            errc::invalid_data);
  EXPECT_EQ(layout::decode_cluster_id(R"({"version":"1","id":""})").error(), errc::invalid_data);
}

// Kafka's Sanitizer (SanitizerTest): URL-encoding with "*" as %2A and a space as %20, and back.
TEST(Layout, SanitizesUserNamesAsKafka) {
  EXPECT_EQ(layout::sanitize("alice"), "alice");
  EXPECT_EQ(layout::sanitize("a.b-c_d09"), "a.b-c_d09");
  EXPECT_EQ(layout::sanitize("user 1*"), "user%201%2A");
  EXPECT_EQ(layout::sanitize("CN=Some User,O=Acme/x+y"), "CN%3DSome%20User%2CO%3DAcme%2Fx%2By");
  EXPECT_EQ(layout::sanitize("<default>"), "%3Cdefault%3E");
  EXPECT_EQ(layout::sanitize("\xc3\xa9t\xc3\xa9"), "%C3%A9t%C3%A9");  // UTF-8 bytes, upper-case hex
  EXPECT_EQ(layout::sanitize(""), "");

  for (const std::string name : {"alice", "user 1*", "CN=Some User,O=Acme/x+y", "%41", "\xc3\xa9t\xc3\xa9", ""})
    EXPECT_EQ(layout::desanitize(layout::sanitize(name)), name) << name;
  EXPECT_EQ(layout::desanitize("a+b%2a%2A"), "a b**");  // URLDecoder: "+" is a space, hex in either case
  EXPECT_EQ(layout::desanitize("<default>"), "<default>");
  for (const std::string broken : {"%", "%4", "a%zz", "%G0"}) EXPECT_FALSE(layout::desanitize(broken)) << broken;
}

}  // namespace
}  // namespace ferry::coord
