#pragma once

#include <array>
#include <functional>
#include <optional>

#include "metrics/broker_metrics.h"
#include "net/request_handler.h"
#include "protocol/api_table.h"
#include "server/broker_context.h"
#include "server/request_context.h"

namespace ferry::server {

// Turns request frames into responses: parses the header, finds the handler for the API key, checks the
// version against the handler's range, decodes the body, runs the handler and encodes its response in the
// request's version. An unknown API key or version, or a body that does not decode, closes the connection
// (Kafka's answer), except ApiVersions, which always gets an answer (KIP-511).
//
// Every API with a schema in broker/schemas has exactly one handler in server/handlers/, checked at
// construction, and ApiVersions advertises exactly those ranges.
class dispatcher final : public net::request_handler {
 public:
  explicit dispatcher(broker_context& broker);

  boost::asio::awaitable<net::request_outcome> handle(std::span<std::byte> frame,
                                                      const net::connection_info& from) override;

 private:
  using runner = std::function<boost::asio::awaitable<net::request_outcome>(request_context&, protocol::reader&)>;
  struct entry {
    protocol::api_info info;
    metrics::api_metrics metrics;
    runner run;
  };

  template <typename Request, typename Response>
  void add(boost::asio::awaitable<Response> (*handler)(request_context&, Request&));

  broker_context& broker_;
  std::array<std::optional<entry>, 128> table_;
};

}  // namespace ferry::server
