#pragma once

#include <memory>

#include "authz/acl_snapshot.h"
#include "net/request_handler.h"
#include "protocol/error_code.h"
#include "protocol/header.h"
#include "server/broker_context.h"

namespace ferry::server {

// One request as a handler sees it: who sent it, in which version, and the broker to serve it from.
struct request_context {
  broker_context& broker;
  const protocol::request_header& header;
  const net::connection_info& connection;
  // Cleared by handlers whose request must not be answered (Produce with acks=0).
  bool send_response = true;
  // Set by handlers that must end the connection instead of answering: an acks=0 produce that failed has
  // no response to carry the error, so Kafka closes the connection and the client refreshes its metadata.
  bool close_connection = false;
  // How many error codes the response carries; feeds the per-API error metric.
  int errors = 0;
  // The request's frame size, which the produce quota counts (as Kafka does).
  std::size_t request_bytes = 0;
  // How long the client is throttled for (client quotas, server/client_quota_use.h): the response's
  // throttle_time_ms, and how long the connection is muted after it.
  std::int32_t throttle_ms = 0;
  // Not charged to the request quota (what brokers send each other, and acks=0 produces, as in Kafka).
  bool request_quota_exempt = false;
  // The ACLs the request is authorized against (server/authorization.h), taken from the view at the first check.
  std::shared_ptr<const authz::acl_snapshot> acls;

  [[nodiscard]] std::int16_t version() const { return header.api_version; }

  // Returns `code` as its wire value, counting it when it is an error.
  std::int16_t error(protocol::error_code code) {
    if (code != protocol::error_code::none) ++errors;
    return protocol::code(code);
  }
};

}  // namespace ferry::server
