#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "protocol/output_buffer.h"

namespace ferry::net {
class busy_meter;
}

namespace ferry::net {

// Who sent a request; handlers use it for logs, metrics and quotas.
struct connection_info {
  std::uint64_t id = 0;
  std::string peer;  // "host:port"
  // The client's address as Kafka's ACLs name hosts (java_host_address in net/host_address.h).
  std::string host;
  // The listener (listeners) the connection came in on: answers name brokers by their addresses on it.
  std::string listener = "PLAINTEXT";
  // Who the client is, as Kafka's principal builder names it: User:ANONYMOUS on PLAINTEXT and on TLS without a
  // client certificate, User:<mapped DN> with one, User:<name> once SASL has authenticated the connection.
  std::string principal = "User:ANONYMOUS";
  // The connection's thread: where a request that waits for something (a parked group request) resumes.
  boost::asio::any_io_executor executor;
  // How long the connection has kept its thread busy (net/busy_time.h): what the request quota charges.
  busy_meter* busy_time = nullptr;
};

// What to do after a request: send `response`, send nothing (a Produce with acks=0), close the connection (a
// frame that does not parse, or an API the broker does not serve, as Kafka does), or send `response` and then
// close (a failed authentication).
struct request_outcome {
  enum class action { respond, no_response, close, respond_and_close };
  action what = action::respond;
  protocol::output_buffer response;  // a whole frame, size prefix included
  // Wait this long before acting (connection.failed.authentication.delay.ms): the connection's coroutine
  // sleeps, no thread does.
  std::chrono::milliseconds delay{0};
  // After answering, read nothing more from the connection for this long (KIP-219: a client over its quota is
  // held back even when it ignores the response's throttle_time_ms).
  std::chrono::milliseconds mute_after{0};
};

// The layer above the network: turns one request frame (without its size prefix) into an outcome.
// `frame` may be modified in place (the produce path assigns offsets inside the request buffer).
class request_handler {
 public:
  virtual ~request_handler() = default;
  virtual boost::asio::awaitable<request_outcome> handle(std::span<std::byte> frame, const connection_info& from) = 0;
};

}  // namespace ferry::net
