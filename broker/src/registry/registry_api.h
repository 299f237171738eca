#pragma once

#include <boost/asio/awaitable.hpp>

#include "registry/registry_reply.h"
#include "registry/registry_state.h"
#include "schema/schema_format.h"

namespace ferry::registry {

// Where a write goes: this broker's writer when it leads `_schemas`, else the registry of the broker that does.
class write_route {
 public:
  virtual ~write_route() = default;
  virtual boost::asio::awaitable<registry_reply> write(registry_request request, request_target target) = 0;
};

// The REST API's front: reads are answered from this broker's copy, writes go their route. Unknown paths are 404
// and known paths with another method 405, in Confluent's error body.
class registry_api {
 public:
  registry_api(registry_state& state, write_route& writes, schema::parse_limits limits)
      : state_(state), writes_(writes), limits_(limits) {}

  boost::asio::awaitable<registry_reply> handle(registry_request request);

 private:
  registry_state& state_;
  write_route& writes_;
  schema::parse_limits limits_;
};

}  // namespace ferry::registry
