#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>

#include "registry/registry_reply.h"
#include "registry/registry_state.h"
#include "registry/write_planner.h"

namespace ferry::registry {

// The writer's way into `_schemas`: one batch appended at the partition's leader with acks=all.
class schemas_log {
 public:
  struct appended {
    std::optional<std::int64_t> next_offset;  // the offset after the batch's last record, when it is in
    std::string error;                        // why not
    bool not_leader = false;                  // the leader moved: the client may retry elsewhere
  };
  virtual ~schemas_log() = default;
  virtual boost::asio::awaitable<appended> append(std::vector<topic_record> records) = 0;
};

// The registry's one writer, on the broker that leads `_schemas`: writes run one at a time, each planned against
// a store that holds every record of the topic (the plan decides ids and versions, so two writes never take the
// same), appended, and answered once this broker has read its own records back.
class schema_writer {
 public:
  schema_writer(const boost::asio::any_io_executor& executor, registry_state& state, schemas_log& log,
                schema::parse_limits limits, std::chrono::milliseconds timeout);

  // `leader_epoch`: of `_schemas` partition 0 as this broker leads it. Under a new epoch the writer first reads
  // to the end of the topic (by appending a NOOP and waiting for it): the previous leader may have appended
  // records this broker has not read yet.
  boost::asio::awaitable<registry_reply> write(registry_request request, request_target target,
                                               std::int32_t leader_epoch);

 private:
  boost::asio::awaitable<std::optional<registry_reply>> catch_up(std::int32_t leader_epoch);
  boost::asio::awaitable<registry_reply> write_in_turn(const registry_request& request, const request_target& target,
                                                       std::int32_t leader_epoch);

  registry_state& state_;
  schemas_log& log_;
  schema::parse_limits limits_;
  std::chrono::milliseconds timeout_;
  // Holds one token while a write runs: the writes' mutual exclusion across coroutines and threads.
  boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> turn_;
  std::optional<std::int32_t> caught_up_epoch_;  // only touched while holding the turn
};

}  // namespace ferry::registry
