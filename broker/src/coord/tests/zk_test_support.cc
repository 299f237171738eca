#include "coord/tests/zk_test_support.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "coord/broker_registration.h"

namespace ferry::coord::test {

testing::zookeeper_server& shared_server() {
  static const auto server = std::make_unique<testing::zookeeper_server>();
  return *server;
}

std::string fresh_connect() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return shared_server().connect_string() + "/" + info->test_suite_name() + "." + info->name() + "-" +
         std::to_string(++counter);
}

std::unique_ptr<zk_session> open_session(const std::string& connect, zk_session_options options) {
  options.connect = connect;
  options.session_timeout = std::chrono::seconds(6);
  options.connect_timeout = std::chrono::seconds(10);
  options.operation_timeout = std::chrono::seconds(6);
  auto session = zk_session::connect(std::move(options));
  EXPECT_TRUE(session) << session.error().message();
  return session ? std::move(session).value() : nullptr;
}

registry_options broker_options(const std::string& connect, std::int32_t id) {
  registry_options options;
  options.connect = connect;
  options.session_timeout = std::chrono::milliseconds(6000);
  options.connect_timeout = std::chrono::milliseconds(10'000);
  options.id = broker_id{id};
  options.endpoints = {{"PLAINTEXT", "PLAINTEXT", "broker-" + std::to_string(id) + ".test", 9090 + id}};
  return options;
}

std::unique_ptr<zk_session> registered_session(const std::string& connect, std::int32_t id) {
  zk_session_options options;
  options.connect = connect;
  auto session = zk_session::connect(options);
  EXPECT_TRUE(session) << session.error().message();
  if (!session) return nullptr;
  const broker_endpoint self{
      broker_id{id}, {{"PLAINTEXT", "PLAINTEXT", "broker-" + std::to_string(id) + ".test", 9090 + id}}, std::nullopt};
  const auto registered = register_broker(*session.value(), self, std::nullopt);
  EXPECT_TRUE(registered) << registered.error().message();
  return registered ? std::move(session).value() : nullptr;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace ferry::coord::test
