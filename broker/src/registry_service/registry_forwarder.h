#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>

#include "registry/registry_reply.h"

namespace ferry::registry_service {

// The header a forwarded write carries: the broker that receives it writes it or refuses it (50004), and never
// forwards it again, so a leader that moved cannot bounce a request between brokers.
inline constexpr std::string_view forwarded_header = "Ferry-Forwarded";

// Sends a write that reached a broker that does not lead `_schemas` to the registry of the one that does (its
// `schema_registry_url` in ZooKeeper), as Confluent's followers forward to their leader, and hands its answer
// back. The broker speaks as itself there: over https with its own certificate (the inter-broker listener's TLS
// context, which mtls takes as the broker's principal), and with HTTP Basic as its inter-broker SASL user when
// it has one.
class registry_forwarder {
 public:
  struct settings {
    std::function<std::shared_ptr<boost::asio::ssl::context>()> tls;  // empty: https cannot be forwarded to
    bool verify_host = true;
    std::string basic_user;  // empty: no Authorization header
    std::string basic_password;
    std::chrono::milliseconds timeout{10000};
    std::uint64_t max_response_bytes = std::uint64_t{16} << 20;
  };
  explicit registry_forwarder(settings s) : settings_(std::move(s)) {}

  // 50003 when the leader cannot be reached or answers nothing that parses.
  boost::asio::awaitable<registry::registry_reply> forward(const std::string& url,
                                                           const registry::registry_request& request) const;

 private:
  settings settings_;
};

}  // namespace ferry::registry_service
