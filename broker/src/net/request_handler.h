#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "protocol/output_buffer.h"

namespace ferry::net {

// Who sent a request; handlers use it for logs, metrics and quotas.
struct connection_info {
  std::uint64_t id = 0;
  std::string peer;  // "host:port"
  // The listener (listeners) the connection came in on: answers name brokers by their addresses on it.
  std::string listener = "PLAINTEXT";
  // The connection's thread: where a request that waits for something (a parked group request) resumes.
  boost::asio::any_io_executor executor;
};

// What to do after a request: send `response`, send nothing (a Produce with acks=0), or close the
// connection (a frame that does not parse, or an API the broker does not serve, as Kafka does).
struct request_outcome {
  enum class action { respond, no_response, close };
  action what = action::respond;
  protocol::output_buffer response;  // a whole frame, size prefix included
};

// The layer above the network: turns one request frame (without its size prefix) into an outcome.
// `frame` may be modified in place (the produce path assigns offsets inside the request buffer).
class request_handler {
 public:
  virtual ~request_handler() = default;
  virtual boost::asio::awaitable<request_outcome> handle(std::span<std::byte> frame, const connection_info& from) = 0;
};

}  // namespace ferry::net
