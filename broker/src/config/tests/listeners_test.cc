#include "config/listeners.h"

#include <gtest/gtest.h>

namespace ferry::config {
namespace {

std::string error_of(const std::map<std::string, std::string>& settings) {
  try {
    (void)parse_listeners(settings);
  } catch (const config_exception& e) {
    return e.what();
  }
  return "";
}

TEST(listeners, default_is_one_plaintext_listener_on_9092) {
  const auto c = parse_listeners({});
  ASSERT_EQ(c.listeners.size(), 1U);
  EXPECT_EQ(c.listeners[0].name, "PLAINTEXT");
  EXPECT_EQ(c.listeners[0].bind.port, 9092);
  ASSERT_TRUE(c.listeners[0].advertised);
  EXPECT_FALSE(c.listeners[0].advertised->host.empty());  // this machine's name
  EXPECT_EQ(c.inter_broker, "PLAINTEXT");
}

TEST(listeners, internal_and_external_with_an_inter_broker_listener) {
  const auto c = parse_listeners({{"listeners", "INTERNAL://:9092, external://0.0.0.0:9094"},
                                  {"advertised.listeners", "INTERNAL://b-0.h:9092,EXTERNAL://203.0.113.7:31090"},
                                  {"listener.security.protocol.map", "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT"},
                                  {"inter.broker.listener.name", "INTERNAL"}});
  ASSERT_EQ(c.listeners.size(), 2U);
  EXPECT_EQ(c.listeners[1].name, "EXTERNAL");  // names are upper-cased, as Kafka does
  EXPECT_EQ(c.listeners[1].bind.port, 9094);
  EXPECT_EQ(c.listeners[1].advertised->host, "203.0.113.7");
  EXPECT_EQ(c.listeners[1].advertised->port, 31090);
  EXPECT_EQ(c.inter_broker_listener().name, "INTERNAL");
  EXPECT_EQ(c.inter_broker_listener().advertised->host, "b-0.h");
}

TEST(listeners, a_listener_left_out_of_advertised_listeners_is_not_advertised) {
  const auto c = parse_listeners({{"listeners", "PLAINTEXT://:9092,LOCAL://127.0.0.1:9093"},
                                  {"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,LOCAL:PLAINTEXT"},
                                  {"advertised.listeners", "PLAINTEXT://b.h:9092"}});
  EXPECT_TRUE(c.listeners[0].advertised);
  EXPECT_FALSE(c.listeners[1].advertised);
}

TEST(listeners, bad_combinations_are_refused_naming_the_setting) {
  // No security protocol for the name (the default map knows only the protocols' own names).
  EXPECT_NE(error_of({{"listeners", "INTERNAL://:9092"}, {"inter.broker.listener.name", "INTERNAL"}})
                .find("listener.security.protocol.map"),
            std::string::npos);
  // A TLS listener needs its key and certificate.
  EXPECT_NE(error_of({{"listeners", "PLAINTEXT://:9092,SSL://:9093"}}).find("ssl.keystore.location"),
            std::string::npos);
  EXPECT_NE(error_of({{"listeners", "PLAINTEXT://:9092,PLAINTEXT://:9093"}}).find("named twice"), std::string::npos);
  EXPECT_NE(error_of({{"listeners", "A://:9092,B://127.0.0.1:9092"},
                      {"listener.security.protocol.map", "A:PLAINTEXT,B:PLAINTEXT"},
                      {"inter.broker.listener.name", "A"}})
                .find("share port 9092"),
            std::string::npos);
  EXPECT_NE(error_of({{"advertised.listeners", "OTHER://h:9092"}}).find("not in 'listeners'"), std::string::npos);
  EXPECT_NE(error_of({{"listeners", "A://:9092"}, {"listener.security.protocol.map", "A:PLAINTEXT"}})
                .find("inter.broker.listener.name"),
            std::string::npos);
  EXPECT_NE(error_of({{"listeners", "PLAINTEXT://:9092,B://:9093"},
                      {"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,B:PLAINTEXT"},
                      {"advertised.listeners", "PLAINTEXT://h:9092"},
                      {"inter.broker.listener.name", "B"}})
                .find("'inter.broker.listener.name'"),
            std::string::npos);
  EXPECT_NE(error_of({{"listener.security.protocol.map", "PLAINTEXT:TLS"}}).find("unknown security protocol"),
            std::string::npos);
  EXPECT_NE(error_of({{"listeners", "PLAINTEXT://h"}}).find("'listeners'"), std::string::npos);
  EXPECT_NE(error_of({{"listeners", "PLAINTEXT://:0"}}).find("needs a port"), std::string::npos);
}

}  // namespace
}  // namespace ferry::config
