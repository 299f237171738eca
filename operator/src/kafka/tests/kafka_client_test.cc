#include "kafka/kafka_client.h"

#include <gtest/gtest.h>

#include "kafka/errc.h"

namespace ferry::kafka {
namespace {

std::shared_ptr<const coord::cluster_view> view_with(std::vector<coord::layout::endpoint> endpoints) {
  auto view = std::make_shared<coord::cluster_view>();
  coord::broker_info broker;
  broker.id = broker_id{1};
  broker.host = endpoints.front().host;
  broker.port = endpoints.front().port;
  broker.endpoints = std::move(endpoints);
  view->brokers[broker.id] = broker;
  return view;
}

std::vector<coord::layout::endpoint> secured() {
  return {{"INTERNAL", "SASL_SSL", "b1.internal", 9092},
          {"CLIENTS", "SASL_SSL", "b1.clients", 9093},
          {"LOCAL", "PLAINTEXT", "127.0.0.1", 9094}};
}

TEST(KafkaClient, TheOperatorsListenerIsTheOneItNames) {
  client_settings s;
  s.listener = "CLIENTS";
  s.security_protocol = "SASL_SSL";
  const kafka_client client(view_with(secured()), s, std::chrono::seconds(1));
  EXPECT_EQ(client.address_of(broker_id{1}).value(), (kafka_client::address{"b1.clients", 9093}));
  EXPECT_EQ(client.any_broker().value(), (kafka_client::address{"b1.clients", 9093}));
  EXPECT_FALSE(client.address_of(broker_id{2}));
}

TEST(KafkaClient, WithoutAListenerNameTheFirstOfTheSecurityProtocolIsUsed) {
  client_settings s;
  s.security_protocol = "SASL_SSL";
  const kafka_client secure(view_with(secured()), s, std::chrono::seconds(1));
  EXPECT_EQ(secure.any_broker().value(), (kafka_client::address{"b1.internal", 9092}));
  // PLAINTEXT, the default: the first PLAINTEXT listener, as before --kafka-listener.
  const client_settings defaults;
  const kafka_client plaintext(view_with(secured()), defaults, std::chrono::seconds(1));
  EXPECT_EQ(plaintext.any_broker().value(), (kafka_client::address{"127.0.0.1", 9094}));
}

TEST(KafkaClient, AListenerOfAnotherSecurityProtocolOrNoneOfTheNameIsAnErrorNotAPlaintextAttempt) {
  client_settings s;
  s.listener = "INTERNAL";  // SASL_SSL, but the settings are PLAINTEXT
  const kafka_client plaintext(view_with(secured()), s, std::chrono::seconds(1));
  EXPECT_EQ(plaintext.any_broker().error(), errc::security_protocol_mismatch);
  s.listener.clear();
  s.security_protocol = "SSL";  // no listener of it
  const kafka_client none(view_with(secured()), s, std::chrono::seconds(1));
  EXPECT_EQ(none.any_broker().error(), errc::security_protocol_mismatch);
  s.listener = "EXTERNAL";
  const kafka_client missing(view_with(secured()), s, std::chrono::seconds(1));
  EXPECT_EQ(missing.address_of(broker_id{1}).error(), errc::no_listener);
  EXPECT_NE(missing.address_of(broker_id{1}).error().message().find("--kafka-listener"), std::string::npos);
}

TEST(KafkaClient, KafkaErrorsAreNamedAsKafkaNamesThem) {
  EXPECT_EQ(kafka_error(29).message(), "TOPIC_AUTHORIZATION_FAILED");
  EXPECT_EQ(kafka_error(29).category(), kafka_error_category());
}

}  // namespace
}  // namespace ferry::kafka
