#include "kafka/kafka_client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "base/log.h"
#include "kafka/errc.h"

namespace ferry::kafka {
namespace {

constexpr std::int32_t max_response_bytes = 16 << 20;

}  // namespace

result<kafka_client::address> kafka_client::endpoint_of(const coord::broker_info& broker) const {
  if (settings_.listener.empty()) {
    // The first listener of the operator's security protocol, as before --kafka-listener: the first PLAINTEXT one.
    if (broker.endpoints.empty()) return address{broker.host, broker.port};
    for (const auto& e : broker.endpoints) {
      if (e.security_protocol == settings_.security_protocol) return address{e.host, e.port};
    }
    FERRY_LOG_LIMITED(error, "kafka", 60'000)
        << "broker " << broker.id << " has no listener of --kafka-security-protocol " << settings_.security_protocol
        << " (name one with --kafka-listener)";
    return errc::security_protocol_mismatch;
  }
  const auto* endpoint = broker.endpoint_of(settings_.listener);
  if (endpoint == nullptr) {
    FERRY_LOG_LIMITED(error, "kafka", 60'000)
        << "broker " << broker.id << " has no listener " << settings_.listener << " (--kafka-listener)";
    return errc::no_listener;
  }
  if (!endpoint->security_protocol.empty() && endpoint->security_protocol != settings_.security_protocol) {
    FERRY_LOG_LIMITED(error, "kafka", 60'000)
        << "broker " << broker.id << "'s listener " << settings_.listener << " is " << endpoint->security_protocol
        << ", not --kafka-security-protocol " << settings_.security_protocol;
    return errc::security_protocol_mismatch;
  }
  return address{endpoint->host, endpoint->port};
}

result<kafka_client::address> kafka_client::address_of(broker_id id) const {
  const auto broker = view_->brokers.find(id);
  if (broker == view_->brokers.end()) return std::make_error_code(std::errc::host_unreachable);
  return endpoint_of(broker->second);
}

result<kafka_client::address> kafka_client::any_broker() const {
  for (const auto& [id, broker] : view_->brokers) {
    if (broker.port > 0 || !broker.endpoints.empty()) return endpoint_of(broker);
  }
  return std::make_error_code(std::errc::host_unreachable);
}

void kafka_client::close(const address& to) {
  if (const auto peer = peers_.find(to); peer != peers_.end()) peer->second->close();
}

result<void> kafka_client::round_trip(const address& to, std::span<const std::byte> frame,
                                      std::vector<std::byte>& body) {
  if (!security_) {
    auto read = read_peer_security(settings_);
    if (!read) {
      FERRY_LOG_LIMITED(error, "kafka", 60'000) << read.error();
      return errc::unusable_settings;
    }
    security_ = std::move(read).value();
  }
  auto& peer = peers_[to];
  if (!peer) peer = std::make_unique<net::peer_client>(io_, &*security_);
  result<void> done = std::make_error_code(std::errc::operation_canceled);
  boost::asio::co_spawn(
      io_,
      [&]() -> boost::asio::awaitable<void> {
        if (!peer->is_open()) {
          done = co_await peer->connect(to.host, static_cast<std::uint16_t>(to.port), timeout_);
          if (!done) co_return;
        }
        done = co_await peer->round_trip(frame, timeout_, max_response_bytes, body);
        if (!done) peer->close();
      },
      boost::asio::detached);
  io_.restart();
  io_.run();
  return done;
}

}  // namespace ferry::kafka
